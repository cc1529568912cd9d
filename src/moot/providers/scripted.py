"""Scripted and function providers: model turns played from Python or from a file.

They ship in the package (not under tests/) so demos, UI work and the headless CLI can run
without a network or a key: `moot -p "task" --model scripted:demo.yaml`.

A script is a list of turns. Each turn may hold text, thinking, tool calls, usage, a delay
before it starts, or an error. A file holds either `turns: [...]` (played in order to whichever
agent asks) or `agents: {name: [...]}` (one list per agent, so concurrent peers stay
deterministic), or is a bare list of turns.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections import Counter
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from moot.paths import read_regular
from moot.protocol.events import Error, Event, ModelResponded
from moot.protocol.messages import Usage
from moot.providers.base import (
    Delta,
    Finish,
    ModelRequest,
    ProviderError,
    TextPart,
    ThinkingPart,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)

if TYPE_CHECKING:
    from moot.providers.catalog import ModelInfo


class ScriptedToolCall(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One tool call a scripted turn makes."""

    name: str
    arguments: dict[str, Any] | str = msgspec.field(default_factory=dict)
    """A mapping, or raw text sent as-is (to play a model that emits broken JSON)."""
    id: str | None = None
    """Generated when omitted: `call_<agent>_<n>_<i>`, the i-th call of the n-th turn played
    from the script (both from 0)."""


class ScriptedTurn(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One model turn in a script."""

    text: str = ""
    thinking: str = ""
    tool_calls: list[ScriptedToolCall] = msgspec.field(default_factory=list)
    usage: Usage | None = None
    """Reported usage; when None, a rough count of the text is reported."""
    cost_usd: float | None = None
    finish_reason: str | None = None
    delay: float = 0.0
    """Seconds to wait before the first delta (to play a slow model)."""
    chunk_size: int = 16
    """Characters per streamed text delta."""
    rate: float = 0.0
    """Tokens per second to stream the text at (a token counted as 4 characters, as usage
    estimates do); 0 streams it at once. For benchmarks and demos of a live answer."""
    error: str | None = None
    """Raise a ProviderError with this message (after streaming `text`, if any)."""
    retryable: bool = False


TurnLike = ScriptedTurn | Mapping[str, Any] | str


def as_turn(value: TurnLike) -> ScriptedTurn:
    if isinstance(value, str):
        return ScriptedTurn(text=value)
    if isinstance(value, ScriptedTurn):
        # Built in code, so unchecked: tool calls written as dicts become `ScriptedToolCall`s.
        value = msgspec.structs.asdict(value)
    # Lax: YAML written by hand may say `100.0` or "100" for a count.
    return msgspec.convert(value, ScriptedTurn, strict=False)


async def play(turn: ScriptedTurn, *, tag: str) -> AsyncIterator[Delta]:
    """Stream one scripted turn as provider deltas. `tag` makes generated tool ids unique."""
    if turn.delay:
        await asyncio.sleep(turn.delay)
    if turn.thinking:
        yield ThinkingPart(turn.thinking)
    step = max(1, turn.chunk_size)
    pace = _Pace(turn.rate) if turn.rate > 0 else None
    for start in range(0, len(turn.text), step):
        if pace is not None:
            await pace.wait(start)
        yield TextPart(turn.text[start : start + step])
    if turn.error is not None:
        raise ProviderError(turn.error, provider="scripted", retryable=turn.retryable)
    for index, call in enumerate(turn.tool_calls):
        yield ToolCallStart(index, call.id or f"call_{tag}_{index}", call.name)
        args = call.arguments
        yield ToolCallArgs(index, args if isinstance(args, str) else json.dumps(args))
    usage = turn.usage or Usage(
        input_tokens=0, output_tokens=max(1, (len(turn.text) + len(turn.thinking)) // 4)
    )
    yield UsageReport(usage, turn.cost_usd)
    yield Finish(turn.finish_reason or ("tool_use" if turn.tool_calls else "end_turn"))


class _Pace:
    """Keeps a stream at `rate` tokens per second by the clock, not by summing sleeps (which
    would drift late by each sleep's overshoot)."""

    CHARS_PER_TOKEN = 4

    def __init__(self, rate: float) -> None:
        self._chars_per_s = rate * self.CHARS_PER_TOKEN
        self._began = asyncio.get_running_loop().time()

    async def wait(self, chars_sent: int) -> None:
        loop = asyncio.get_running_loop()
        due = self._began + chars_sent / self._chars_per_s
        if due > loop.time():
            await asyncio.sleep(due - loop.time())


MAX_SCRIPT_BYTES = 16 * 1024 * 1024
"""The largest script read: a model name can come from a repository's agent definition or
command (`model: scripted:/dev/zero`), and reading must not be where a session ends."""


def _read_script(path: Path) -> str:
    """A script file's text: a regular file of at most `MAX_SCRIPT_BYTES` (`read_regular`).

    Raises:
        OSError: it cannot be opened or read.
        ValueError: it is not a regular file, or it is larger than the cap.
    """
    try:
        data = read_regular(path, MAX_SCRIPT_BYTES + 1)
    except ValueError:
        raise ValueError(f"script {path}: not a regular file") from None
    if len(data) > MAX_SCRIPT_BYTES:
        raise ValueError(f"script {path}: larger than {MAX_SCRIPT_BYTES} bytes")
    return data.decode("utf-8")


def _parse_script(path: Path, text: str) -> object:
    if path.suffix == ".json":
        return json.loads(text)
    import yaml  # only scripted runs need it

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from exc


_OPTIONS = ("context_window", "summaries", "titles")
"""Script keys beside the turns: a window to play a small model, compaction summaries and
session titles."""


def _script_options(data: object) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    options = {k: data[k] for k in _OPTIONS if k in data}
    window = options.get("context_window")
    if window is not None and (not isinstance(window, int) or window <= 0):
        raise ValueError("`context_window:` must be a positive number of tokens")
    for key in ("summaries", "titles"):
        if not isinstance(options.get(key, []), list):
            raise ValueError(f"`{key}:` must be a list of turns")
    return options


def _script_shape(data: object) -> tuple[list[Any], dict[str, list[Any]]]:
    """The shared turns and per-agent turns of a parsed script file."""
    if isinstance(data, list):
        return data, {}
    if not isinstance(data, dict) or not ({"turns", "agents"} & data.keys()):
        raise ValueError("needs a list of turns, `turns:` or `agents:`")
    if unknown := sorted(map(str, data.keys() - {"turns", "agents", *_OPTIONS})):
        raise ValueError(
            f"unknown keys {unknown}; a script has `turns:` and/or `agents:` "
            "(and may have `context_window:`, `summaries:` and `titles:`)"
        )
    turns, agents = data.get("turns", []), data.get("agents", {})
    # A string is iterable too: without this check `turns: hello` plays five one-letter turns.
    if not isinstance(turns, list):
        raise ValueError("`turns:` must be a list of turns")
    if not isinstance(agents, dict) or not all(isinstance(t, list) for t in agents.values()):
        raise ValueError("`agents:` must map each agent's name to a list of turns")
    return turns, agents


class ScriptedProvider:
    """Plays scripted turns in order, per agent when the script names agents.

    Its position is the number of turns each agent has taken; `resume` sets it from the log
    when a session goes on in a new process, so the script continues where the log ends.
    """

    def __init__(
        self,
        turns: Sequence[TurnLike] = (),
        *,
        agents: Mapping[str, Sequence[TurnLike]] | None = None,
        name: str = "scripted",
        context_window: int | None = None,
        summaries: Sequence[TurnLike] = (),
        titles: Sequence[TurnLike] = (),
    ) -> None:
        self.name = name
        self._shared = [as_turn(t) for t in turns]
        self._per_agent = {a: [as_turn(t) for t in ts] for a, ts in (agents or {}).items()}
        self._position: dict[str, int] = {}
        self.context_window = context_window
        """A window to play a small model against (compaction); None: nothing bounds it."""
        self._summaries = [as_turn(t) for t in summaries]
        self.summaries_asked = 0
        """Compaction requests answered: from `summaries` in order, then a canned summary."""
        self._titles = [as_turn(t) for t in titles]
        self.titles_asked = 0
        """Title requests answered: from `titles` in order, then a canned title."""

    def model_info(self) -> ModelInfo | None:
        if self.context_window is None:
            return None
        from moot.providers.catalog import ModelInfo  # lazy: only a bounded script needs it

        return ModelInfo(name=self.name, context_window=self.context_window, images=True)

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """Load a script from YAML or JSON (by extension; YAML is a superset of JSON).

        Raises:
            ValueError: the file cannot be read, does not parse, or is not a script; the
                message names the file (the CLI prints it as a usage error).
        """
        path = Path(path)
        try:
            text = _read_script(path)
        except UnicodeDecodeError as exc:
            raise ValueError(f"script {path}: not UTF-8 ({exc.reason})") from exc
        except OSError as exc:
            raise ValueError(f"cannot read script {path}: {exc.strerror}") from exc
        try:
            data = _parse_script(path, text)
            turns, agents = _script_shape(data)
            return cls(
                turns, agents=agents, name=f"scripted:{path.resolve()}", **_script_options(data)
            )
        except ValueError as exc:  # JSONDecodeError and msgspec's ValidationError included
            raise ValueError(f"script {path}: {exc}") from exc

    def _script_for(self, agent: str) -> tuple[str, list[ScriptedTurn]]:
        if agent in self._per_agent:
            return agent, self._per_agent[agent]
        return "", self._shared

    def fast_forward(self, agent: str, turns_taken: int) -> None:
        """Count `turns_taken` model turns of `agent` as already played."""
        key, _ = self._script_for(agent)
        self._position[key] = self._position.get(key, 0) + turns_taken

    def resume(self, log: Iterable[Event]) -> None:
        """Go on where a session's log ends: every call made to this script is a turn played.

        A call is a whole answer or a provider error that names this script (a partial answer
        is counted by its error); summaries and titles (`purpose="compact"`, `"title"`) are
        neither.
        """
        for agent, turns in Counter(_calls_to(self.name, log)).items():
            self.fast_forward(agent, turns)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        if request.purpose == "compact":
            # Summaries never take an agent's scripted turns: a script plays the same with
            # compaction or without, and a resume fast-forwards by model turns only.
            asked, self.summaries_asked = self.summaries_asked, self.summaries_asked + 1
            turn = self._summaries[asked] if asked < len(self._summaries) else _canned(request)
            async for delta in play(turn, tag=f"summary_{asked}"):
                yield delta
            return
        if request.purpose == "title":  # likewise
            asked, self.titles_asked = self.titles_asked, self.titles_asked + 1
            turn = self._titles[asked] if asked < len(self._titles) else _canned_title(request)
            async for delta in play(turn, tag=f"title_{asked}"):
                yield delta
            return
        key, script = self._script_for(request.agent)
        position = self._position.get(key, 0)
        if position >= len(script):
            raise ProviderError(
                f"the script has no turn left for agent {request.agent!r} (it has {len(script)})",
                provider=self.name,
            )
        self._position[key] = position + 1
        async for delta in play(script[position], tag=f"{request.agent or 'turn'}_{position}"):
            yield delta


def _calls_to(model: str, log: Iterable[Event]) -> Iterator[str]:
    """The agent of each model call made to `model` in `log`."""
    for event in log:
        if isinstance(event, ModelResponded):
            if event.model == model and not event.partial:
                yield event.agent
        elif isinstance(event, Error) and event.source == "provider" and event.model == model:
            yield event.agent


def _canned(request: ModelRequest) -> ScriptedTurn:
    chars = sum(len(m.content) for m in request.messages)
    return ScriptedTurn(
        text=(
            f"## Task\nAs asked ({chars} characters summarised).\n\n## Decisions\n- none\n\n"
            "## Files touched\n- none\n\n## Open threads\n- none"
        )
    )


def _canned_title(request: ModelRequest) -> ScriptedTurn:
    words = " ".join(request.messages[-1].content.split()[:6]) if request.messages else ""
    return ScriptedTurn(text=f"Scripted: {words}")


ModelFunction = Callable[[ModelRequest], TurnLike | Awaitable[TurnLike]]


class FunctionProvider:
    """Asks a Python function for each model turn: `fn(request) -> turn` (sync or async).

    The function sees the whole request (agent, system prompt, messages, tools), so it can play
    a model that reacts to tool results.
    """

    def __init__(self, fn: ModelFunction, *, name: str = "function") -> None:
        self.name = name
        self._fn = fn
        self._calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        result = self._fn(request)
        if inspect.isawaitable(result):
            result = await result
        tag = f"{request.agent or 'fn'}_{self._calls}"
        self._calls += 1
        async for delta in play(as_turn(result), tag=tag):
            yield delta
