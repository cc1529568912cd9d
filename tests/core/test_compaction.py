"""Compaction: a long run in a tiny window keeps going, and the fold of a compacted log is the
conversation the live process had."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.core.agent import Agent
from moot.core.compact import ELIDED, SUMMARY_HEAD, apply, fallback, tokens
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.core.session import load_session
from moot.hooks import Hooks, parse_hooks
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from moot.protocol.states import RunState, StopReason
from moot.providers.base import ModelRequest, estimate_tokens
from moot.providers.scripted import ScriptedProvider
from moot.store.sqlite import SQLiteStore
from moot.tools.base import SideEffect, tool
from runtime_helpers import call, of, run_turn

WINDOW = 3_000
NO_LOOP_LIMITS = Limits(max_turns=None, max_repeated_tool_calls=None, no_progress_window=None)


@tool(side_effect=SideEffect.READ_ONLY)
def look(at: str) -> str:
    """Look at a file."""
    return f"{at}: " + "x" * 2_000  # ~500 tokens a result: a few fill the window


class Watched(ScriptedProvider):
    """A scripted model that notes the estimate of every request it is sent."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.sizes: list[tuple[str, int]] = []

    async def stream(self, request: ModelRequest):  # type: ignore[override]
        self.sizes.append((request.purpose, estimate_tokens(request)))
        async for delta in super().stream(request):
            yield delta


def step(at: str) -> dict[str, object]:
    return {"tool_calls": [call("look", at=at)]}


def long_script(steps: int) -> list[object]:
    return [step(f"f{i}.py") for i in range(steps)] + ["all looked at"]


def open_runtime(db: Path, model: ScriptedProvider, session_id: str | None = None, **kw) -> Runtime:
    return Runtime(
        [Agent("main", model=model)],
        store=SQLiteStore(db),
        session_id=session_id,
        options=RuntimeOptions(tools=[look], limits=NO_LOOP_LIMITS, **kw),
    )


async def test_a_long_run_in_a_tiny_window_keeps_going(tmp_path: Path) -> None:
    model = Watched(long_script(30), context_window=WINDOW)
    runtime = open_runtime(tmp_path / "s.db", model)
    finished, events = await run_turn(runtime, "look at everything")
    assert (finished.state, finished.output) == (RunState.COMPLETED, "all looked at")
    compactions = of(events, ev.ContextCompacted)
    assert len(compactions) >= 3
    assert {c.trigger for c in compactions} == {"auto"}
    assert {c.method for c in compactions} == {"model"}  # the canned summaries fit
    turns = [size for purpose, size in model.sizes if purpose == "turn"]
    assert len(turns) == 31
    assert max(turns) <= int(WINDOW * 0.8)  # every request fit under the threshold
    # Without compaction the last request would have been ~15k tokens.
    assert all(c.tokens_after < c.tokens_before for c in compactions)


async def test_a_compacted_session_resumes_to_the_same_conversation(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    runtime = open_runtime(db, ScriptedProvider(long_script(12), context_window=WINDOW))
    finished, events = await run_turn(runtime, "look at everything")
    assert of(events, ev.ContextCompacted) and finished.state is RunState.COMPLETED
    live = runtime.conversation()
    assert SUMMARY_HEAD in live[0].content
    runtime.submit(ops.Shutdown())
    again = open_runtime(db, ScriptedProvider([], context_window=WINDOW), runtime.session_id)
    assert again.conversation() == live
    # The fold of the whole log (no checkpoint) agrees too.
    store = SQLiteStore(db)

    class NoCheckpoints:
        def __getattr__(self, name: str):
            return getattr(store, name)

        def latest_checkpoint(self, session_id: str, key: str) -> None:
            return None

    folded = load_session(NoCheckpoints(), runtime.session_id, NO_LOOP_LIMITS)  # type: ignore[arg-type]
    assert folded.history["main"] == live
    again.submit(ops.Shutdown())


async def test_a_compaction_in_a_later_turn_rewrites_what_the_checkpoint_holds(
    tmp_path: Path,
) -> None:
    """The checkpoint saves what a turn added; a turn that compacted the conversation it
    began with saves it anew, so the session loads as the live one had it."""
    db = tmp_path / "s.db"
    script = [step("first.py"), "looked", *long_script(12)]
    runtime = open_runtime(db, ScriptedProvider(script, context_window=WINDOW))
    await run_turn(runtime, "look at one")
    finished, events = await run_turn(runtime, "look at everything")
    assert of(events, ev.ContextCompacted) and finished.state is RunState.COMPLETED
    live = runtime.conversation()
    assert SUMMARY_HEAD in live[0].content and "look at one" not in str(live)
    runtime.submit(ops.Shutdown())
    again = open_runtime(db, ScriptedProvider([], context_window=WINDOW), runtime.session_id)
    assert again.conversation() == live
    again.submit(ops.Shutdown())


async def test_when_summarising_fails_the_fallback_keeps_the_run_going(tmp_path: Path) -> None:
    broken = [{"error": "summariser down"}] * 40
    model = Watched(long_script(20), context_window=WINDOW, summaries=broken)
    runtime = open_runtime(tmp_path / "s.db", model)
    finished, events = await run_turn(runtime, "look at everything")
    assert finished.state is RunState.COMPLETED
    compactions = of(events, ev.ContextCompacted)
    assert compactions and {c.method for c in compactions} == {"fallback"}
    assert compactions[0].elided  # tool outputs go first
    assert max(size for purpose, size in model.sizes if purpose == "turn") <= int(WINDOW * 0.8)
    assert not of(events, ev.Error)  # a failed summary is no error of the run


async def test_an_overflow_from_the_provider_compacts_and_retries_once(tmp_path: Path) -> None:
    overflow = {"error": "prompt is too long: 250000 tokens > 200000 maximum"}
    script = [step("a"), step("b"), overflow, "done"]
    model = Watched(script, context_window=200_000)
    runtime = open_runtime(tmp_path / "s.db", model)
    finished, events = await run_turn(runtime)
    assert (finished.state, finished.output) == (RunState.COMPLETED, "done")
    (compaction,) = of(events, ev.ContextCompacted)
    assert compaction.trigger == "overflow"
    kinds = [e.kind for e in events]
    assert kinds.index("error") < kinds.index("context_compacted")


async def test_a_second_overflow_ends_the_turn(tmp_path: Path) -> None:
    overflow = {"error": "maximum context length exceeded"}
    script = [step("a"), overflow, overflow, "never"]
    runtime = open_runtime(tmp_path / "s.db", ScriptedProvider(script, context_window=200_000))
    finished, events = await run_turn(runtime)
    assert finished.stop_reason is StopReason.PROVIDER_ERROR
    assert len(of(events, ev.ContextCompacted)) == 1 and len(of(events, ev.Error)) == 2


async def test_compact_between_turns_is_folded_and_survives_a_resume(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    script = [step(f"f{i}") for i in range(4)] + ["one", "two", "three"]
    model = ScriptedProvider(script)
    runtime = open_runtime(db, model)
    await run_turn(runtime, "first")
    await run_turn(runtime, "second")
    before = runtime.conversation()
    events = runtime.subscribe()
    runtime.submit(ops.Compact(focus="the parser"))
    await runtime.wait()
    compacted = None
    async for e in events:
        if e.kind == "history_compacted":
            compacted = e
            break
    assert isinstance(compacted, ev.HistoryCompacted)
    assert (compacted.method, compacted.focus, compacted.trigger) == (
        "model",
        "the parser",
        "manual",
    )
    live = runtime.conversation()
    assert live == apply(before, compacted) and len(live) < len(before)
    assert live[-1] == before[-1]  # recent turns stay verbatim
    finished, _ = await run_turn(runtime, "third")  # the next turn reads the compacted history
    assert finished.output == "three"
    runtime.submit(ops.Shutdown())
    again = open_runtime(db, ScriptedProvider([]), runtime.session_id)
    assert again.conversation() == runtime.conversation()
    again.submit(ops.Shutdown())


async def test_a_summary_that_would_not_shrink_the_context_is_not_recorded(
    tmp_path: Path,
) -> None:
    summary = "## Task\n" + " ".join(["All that was said, at length."] * 20)
    model = ScriptedProvider(["hello", "hi"], summaries=[summary])
    runtime = open_runtime(tmp_path / "s.db", model)
    await run_turn(runtime, "one")
    await run_turn(runtime, "two")
    before = runtime.conversation()
    events = runtime.subscribe()
    runtime.submit(ops.Compact())
    await runtime.wait()

    refused = await anext(aiter(events))
    assert model.summaries_asked == 1
    assert isinstance(refused, ev.OpRefused) and refused.op == "compact"
    bigger = tokens(apply(before, ev.HistoryCompacted(summary=summary, replaced=2)))
    assert refused.reason == (
        f"the summary would not shrink the conversation (about {tokens(before)} → {bigger} "
        "tokens): nothing was compacted"
    )
    assert runtime.conversation() == before
    assert runtime.store.events(runtime.session_id, kinds=("history_compacted",)) == []
    runtime.submit(ops.Shutdown())


async def test_compact_with_nothing_to_compact_is_refused(tmp_path: Path) -> None:
    runtime = open_runtime(tmp_path / "s.db", ScriptedProvider([]))
    events = runtime.subscribe()
    runtime.submit(ops.Compact())
    refused = await anext(aiter(events))
    assert isinstance(refused, ev.OpRefused) and "nothing to compact" in refused.reason


async def test_auto_compaction_fires_the_precompact_hook(tmp_path: Path) -> None:
    marker = tmp_path / "compacted.txt"
    hook = {"matcher": "auto", "hooks": [{"type": "command", "command": f"cat > {marker}"}]}
    hooks = Hooks(parse_hooks({"PreCompact": [hook]}), tmp_path)
    model = ScriptedProvider(long_script(8), context_window=WINDOW)
    runtime = open_runtime(tmp_path / "s.db", model, hooks=hooks)
    finished, events = await run_turn(runtime)
    assert finished.state is RunState.COMPLETED
    ran = [e for e in of(events, ev.HookRan) if e.hook_event == "PreCompact"]
    assert ran and len(ran) == len(of(events, ev.ContextCompacted))
    assert '"trigger": "auto"' in marker.read_text()


def _conversation(results: int) -> list:
    messages: list = [UserMessage(content="fix the parser")]
    for i in range(results):
        tc = ToolCall(id=f"t{i}", name="read", arguments={"path": f"src/p{i}.py"})
        messages.append(AssistantMessage(content="", tool_calls=(tc,)))
        messages.append(ToolResultMessage(tool_call_id=f"t{i}", name="read", content="y" * 4_000))
    messages.append(AssistantMessage(content="found it"))
    return messages


def test_the_fallback_blanks_the_oldest_tool_outputs_first() -> None:
    messages = _conversation(6)
    plan = fallback(messages, budget=tokens(messages) - 1_900)
    assert plan.elided == ("t0", "t1") and plan.replaced == 0
    after = apply(messages, plan)
    assert [m.content for m in after if isinstance(m, ToolResultMessage)][:3] == [
        ELIDED,
        ELIDED,
        "y" * 4_000,
    ]
    assert plan.tokens_after == tokens(after) <= tokens(messages) - 1_900


def test_the_fallback_drops_the_oldest_turns_when_blanking_is_not_enough() -> None:
    messages = _conversation(6)
    plan = fallback(messages, budget=100)
    assert plan.replaced > 0 and "src/p0.py" in plan.summary and "fix the parser" in plan.summary
    after = apply(messages, plan)
    assert tokens(after) <= 100 and after[-1] == messages[-1]
    assert not isinstance(after[1] if len(after) > 1 else None, ToolResultMessage)
    assert fallback(messages, budget=100) == plan  # deterministic


class Crash(BaseException):
    """Stands for the process dying: nothing in the run catches it, so no end is recorded."""


class CrashingAfterCompaction(Watched):
    """Records each turn request's messages; dies on the first request after a compaction."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[tuple] = []
        self.compacted = False

    async def stream(self, request: ModelRequest):  # type: ignore[override]
        if request.purpose == "compact":
            self.compacted = True
        elif self.compacted:
            self.sent.append(tuple(request.messages))
            raise Crash
        async for delta in super().stream(request):
            yield delta


async def test_a_run_killed_after_a_compaction_resumes_with_the_context_it_had(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    model = CrashingAfterCompaction(long_script(12), context_window=WINDOW)
    runtime = open_runtime(db, model)
    runtime.submit(ops.UserTurn(text="look at everything"))
    with pytest.raises(Crash):
        await runtime.wait()
    (live,) = model.sent  # what the model was about to read when the process "died"
    runtime.submit(ops.Shutdown())
    store = SQLiteStore(db)
    assert store.open_run(runtime.session_id) is not None
    stored = load_session(store, runtime.session_id, NO_LOOP_LIMITS)
    assert stored.open_run is not None
    assert tuple(stored.open_run.calls[stored.open_run.run_id].messages) == live
    # Resumed, the next request is the one the killed process was sending.
    resumed_model = Recording(long_script(12), context_window=WINDOW)
    again = open_runtime(db, resumed_model, runtime.session_id)
    assert again.unfinished_run is not None
    again.submit(ops.ResumeRun())
    finished = await again.wait()
    assert finished is not None and finished.state is RunState.COMPLETED
    assert resumed_model.sent[0] == live
    again.submit(ops.Shutdown())


class Recording(Watched):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.sent: list[tuple] = []

    async def stream(self, request: ModelRequest):  # type: ignore[override]
        if request.purpose == "turn":
            self.sent.append(tuple(request.messages))
        async for delta in super().stream(request):
            yield delta


@pytest.mark.parametrize(("share", "compacts"), [(0.3, True), (None, False)])
async def test_the_autocompactat_setting_reaches_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: float | None, compacts: bool
) -> None:
    from moot.client.local import SessionOptions, open_client
    from moot.testing import drive_turn

    monkeypatch.setenv("MOOT_SANDBOX", "none")
    work = tmp_path / "project"
    (work / ".moot").mkdir(parents=True)
    if share is not None:
        (work / ".moot" / "settings.json").write_text(json.dumps({"autoCompactAt": share}))
    for i in range(8):
        (work / f"f{i}.txt").write_text(f"file {i}\n" + "y" * 3_000 + "\n")
    reads = [{"tool_calls": [call("read", path=f"f{i}.txt")]} for i in range(8)]
    script = {"context_window": 20_000, "turns": [*reads, {"text": "read them all"}]}
    (tmp_path / "script.json").write_text(json.dumps(script))
    client = open_client(SessionOptions(cwd=work, model=f"scripted:{tmp_path / 'script.json'}"))
    outcome = await drive_turn(client, "read every file")
    await client.close()
    assert outcome.finished.output == "read them all"
    compactions = [e for e in outcome.events if isinstance(e, ev.ContextCompacted)]
    assert bool(compactions) is compacts


async def test_compact_runs_the_precompact_hook_with_the_focus(tmp_path: Path) -> None:
    marker = tmp_path / "asked.json"
    hook = {"matcher": "manual", "hooks": [{"type": "command", "command": f"cat > {marker}"}]}
    hooks = Hooks(parse_hooks({"PreCompact": [hook]}), tmp_path)
    script = [step(f"f{i}") for i in range(3)] + ["one", "two"]
    runtime = open_runtime(tmp_path / "s.db", ScriptedProvider(script), hooks=hooks)
    await run_turn(runtime, "first")
    await run_turn(runtime, "second")
    runtime.submit(ops.Compact(focus="keep the parser notes"))
    await runtime.wait()
    said = json.loads(marker.read_text())
    assert (said["trigger"], said["custom_instructions"]) == ("manual", "keep the parser notes")
    assert SUMMARY_HEAD in runtime.conversation()[0].content
    runtime.submit(ops.Shutdown())
