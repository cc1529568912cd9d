"""The Python API: `run`, `async_run` and `stream` over one Runtime.

from moot import Agent, run
result = run("Summarise README.md", Agent("main", model="scripted:demo.yaml"))
print(result.output)
"""

from __future__ import annotations

import asyncio
import inspect
import os
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from moot.core.agent import Agent
from moot.core.event_stream import EventStream
from moot.core.gate import TurnGate
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import Attachment, Message, Usage
from moot.protocol.states import RunState, StopReason
from moot.store.base import Store
from moot.tools.base import Tool

if TYPE_CHECKING:
    from moot.mcp.manager import McpManager


class RunResult(msgspec.Struct, frozen=True):
    """What one run produced."""

    output: str
    """The first agent's answer (or what it had when the run stopped)."""
    state: RunState
    stop_reason: StopReason
    session_id: str
    messages: list[Message]
    """The first agent's conversation, as its model saw it."""
    events: list[ev.Event]
    """Every event of the run, in log order."""
    usage: Usage
    cost_usd: float
    turns: int


Elicit = Callable[[str, str, dict[str, Any]], Any]
"""Answers an MCP server's question (`RunOptions.on_elicit`)."""

OnMessage = Callable[[ev.MessageSent, Callable[[str], None]], object]
"""Called with each message an agent sends the person (`send_message(task_id="user")`) and a
`send(text)` that answers the agent that sent it (read at its next step)."""


class RunOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The options of `run`, `async_run`, `stream` and `run_background`, besides the message
    and the agents: the one definition of their parameters. Each is also a keyword argument of
    theirs (`run(message, agents, tools=[add])`); `options=RunOptions(...)` gives several at
    once, and keywords given beside it win."""

    starting_agents: Sequence[Agent] | None = None
    """Several agents that each get the message at once; the output is their results, tagged
    `[name]...[/name]`. None (the default): the first agent gets it."""
    run_agents: Sequence[Agent] | None = None
    """The pool: only these may start or be called (a starting agent outside it is left out,
    with a warning). None (the default): the agents given."""
    tools: Sequence[Tool] = ()
    """Tools every agent has; one named like a built-in (`finish`) replaces it. None by
    default."""
    limits: Limits | None = None
    """Bounds on the run; None (the default): `Limits()`."""
    store: Store | None = None
    """Where to keep the log; None (the default): an in-memory store."""
    session_id: str | None = None
    """Continue this session of `store` (the agents remember it); None (the default): a new
    session."""
    approval: ApprovalPolicy | None = None
    """Settles tool approvals; None (the default): everything is allowed."""
    gate: TurnGate | None = None
    """Sees each completed model turn; may replace, retry or stop it. None by default."""
    attachments: Sequence[Attachment] = ()
    """Images sent with the message; none by default."""
    allow_background_agents: bool = False
    """Offer `call_agent(background=true)`, `spawn_background_agent` and the message tools;
    off by default."""
    disabled_tools: Sequence[str] = ()
    """Built-in peer tools not offered (`finish` cannot be disabled); none by default."""
    extra_instructions: str = ""
    """An ADDITIONAL INSTRUCTIONS section of the system prompt (see
    `extra_instructions_scope`); none by default."""
    extra_instructions_scope: str = "entry"
    """Who reads `extra_instructions`: the agents the person addresses (`entry`, the
    default) or every call (`all`)."""
    pass_history: bool = False
    """An agent called again by the same caller sees their earlier exchange; off by default."""
    on_message: OnMessage | None = None
    """Called with each message an agent sends the person, and a `send(text)` that answers
    it; offers the agents `send_message` and `get_messages`. None by default."""
    mcp_servers: Mapping[str, Any] | None = None
    """MCP servers the agents use, defined as in `.mcp.json` (`{"fs": {"command": "npx",
    "args": [...]}}`): their tools join `tools` as `mcp__<name>__<tool>`; the first model
    request waits for them (`MCP_TIMEOUT`, 30 s at most), and they stop with the run. None by
    default."""
    on_elicit: Elicit | None = None
    """Answers the MCP servers' questions (elicitation): `(server, message, schema)` ->
    `("accept", {...})`, `("decline", None)` or `("cancel", None)`, sync or async. None (the
    default): the servers are not told they may ask."""


Entry = TypeVar("Entry", bound=Callable[..., Any])


def _takes_run_options(entry: Entry) -> Entry:
    """Show `RunOptions`' fields as the keyword arguments of `entry` (`help(run)`, an editor's
    signature), in place of its `**keywords`: they are defined once, on the struct."""
    signature = inspect.signature(entry)
    kept = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    names, defaults = RunOptions.__struct_fields__, RunOptions.__struct_defaults__
    annotations = RunOptions.__annotations__
    fields = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                          annotation=annotations[name])
        for name, default in zip(names, defaults, strict=True)
    ]  # fmt: skip
    entry.__signature__ = signature.replace(parameters=[*kept, *fields])  # type: ignore[attr-defined]
    return entry


def _options(options: RunOptions | None, keywords: dict[str, Any]) -> RunOptions:
    """`options` with the keyword arguments given beside it.

    Raises:
        TypeError: A keyword names no option.
    """
    if unknown := sorted(set(keywords) - set(RunOptions.__struct_fields__)):
        raise TypeError(f"unknown options: {unknown}")
    chosen = options or RunOptions()
    return msgspec.structs.replace(chosen, **keywords) if keywords else chosen


def _pool(
    agents: Agent | Sequence[Agent] | None,
    starting_agents: Sequence[Agent] | None,
    run_agents: Sequence[Agent] | None,
) -> tuple[list[Agent], tuple[str, ...]]:
    """The run's pool (who may take part) and the names of the agents that get the message.

    A starting agent outside the pool cannot take part: it is left out, with a warning."""
    given = [agents] if isinstance(agents, Agent) else list(agents or ())
    pool = list(run_agents or given or starting_agents or ())
    if not pool:
        raise ValueError("a run needs at least one agent")
    names = {a.name for a in pool}
    starting = [a.name for a in (starting_agents or ())]
    outside = [n for n in starting if n not in names]
    if outside:
        warnings.warn(
            f"starting agents {outside} are not in run_agents: they cannot take part in the run",
            UserWarning,
            stacklevel=3,
        )
    chosen = tuple(n for n in starting if n in names) or (pool[0].name,)
    return pool, chosen


def _runtime(pool: Sequence[Agent], options: RunOptions, *, peer_messages: bool) -> Runtime:
    """The runtime of one run of the Python API: `options` as the runtime takes them (its MCP
    servers as `RuntimeOptions.mcp`, which `_stop_servers` stops)."""
    from moot.store.memory import MemoryStore

    servers = _mcp(options)
    tools = [*options.tools, *servers.tools()] if servers is not None else options.tools
    runtime = Runtime(
        pool,
        store=options.store or MemoryStore(),
        session_id=options.session_id,
        options=RuntimeOptions(
            tools=tools,
            limits=options.limits,
            approval=options.approval,
            gate=options.gate,
            allow_background_agents=options.allow_background_agents,
            disabled_tools=tuple(options.disabled_tools),
            extra_instructions=options.extra_instructions,
            extra_scope=options.extra_instructions_scope,
            pass_history=options.pass_history,
            peer_messages=peer_messages,
            before_request=_ready(servers) if servers is not None else None,
            mcp=servers,
        ),
    )
    if servers is not None:
        servers.attach(runtime.tools)  # a server's live tools as it comes up
    return runtime


async def _stop_servers(runtime: Runtime) -> None:
    """Stop the run's MCP servers (`RunOptions.mcp_servers`), once it has ended."""
    close = getattr(runtime.options.mcp, "close", None)
    if close is not None:
        await close()


def _mcp(options: RunOptions) -> McpManager | None:
    if not options.mcp_servers:
        return None
    from moot.mcp.sdk import sdk_servers  # the manager only: the SDK runs in its host process

    elicit = options.on_elicit
    if elicit is None:
        return sdk_servers(options.mcp_servers)

    async def answer(server: str, message: str, schema: dict[str, Any]) -> Any:
        said = elicit(server, message, schema)
        return await said if inspect.isawaitable(said) else said

    return sdk_servers(options.mcp_servers, answer)


def _ready(servers: McpManager) -> Callable[[], Awaitable[None]]:
    """Waits once for the servers before the first request; a late one is warned about."""
    from moot.mcp.readiness import wait_seconds

    waited: list[bool] = []

    async def ready() -> None:
        if waited:
            return
        waited.append(True)
        for late in await servers.until_ready(wait_seconds(None, os.environ)):
            warnings.warn(late, UserWarning, stacklevel=2)

    return ready


def _turn(
    message: str, starting: tuple[str, ...], attachments: Sequence[Attachment]
) -> ops.UserTurn:
    if len(starting) > 1:
        return ops.UserTurn(text=message, attachments=tuple(attachments), agents=starting)
    return ops.UserTurn(text=message, attachments=tuple(attachments), agent=starting[0])


@_takes_run_options
def stream(
    message: str,
    agents: Agent | Sequence[Agent] | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Any,
) -> EventStream[ev.Event]:
    """Run one turn and yield its events as they are stored (messages and background returns
    included); the last is `turn_finished`. Takes `async_run`'s options (`RunOptions`).

    `async for` it in a coroutine, or `for` it in plain code (the run then goes on in a thread
    with its own event loop). Leaving the loop early interrupts the run.
    """
    chosen = _options(options, keywords)
    return EventStream(lambda: _events(message, agents, chosen))


async def _events(
    message: str, agents: Agent | Sequence[Agent] | None, chosen: RunOptions
) -> AsyncIterator[ev.Event]:
    pool, starting = _pool(agents, chosen.starting_agents, chosen.run_agents)
    runtime = _runtime(pool, chosen, peer_messages=chosen.on_message is not None)
    _listen(runtime, chosen.on_message)
    events = runtime.events()
    submission = runtime.submit(_turn(message, starting, chosen.attachments))
    try:
        async for event in events:
            _check_taken(event, submission)
            yield event
            if isinstance(event, ev.TurnFinished):
                break
    finally:
        runtime.submit(ops.Shutdown())
        await runtime.wait()
        await _stop_servers(runtime)


def _check_taken(event: ev.Event, submission: str) -> None:
    """Raise if `event` refuses the turn `submission` asked for (a session whose last turn a
    crash left open, an agent it lacks): no turn_finished would ever come.

    Raises:
        RuntimeError: The session refused the turn; the message says why.
    """
    if isinstance(event, ev.OpRefused) and event.submission_id == submission:
        raise RuntimeError(f"session {event.session_id} refused the turn: {event.reason}")


def _listen(runtime: Runtime, on_message: OnMessage | None) -> None:
    """Call `on_message` with each message to the person as it is recorded (synchronously, so
    that what it `send`s is read at the sender's very next step)."""
    if on_message is None:
        return

    def heard(event: ev.Event) -> None:
        if not isinstance(event, ev.MessageSent) or event.to_call_id is not None:
            return
        sender = event.call_id

        def send(text: str) -> None:
            runtime.submit(ops.SendMessage(to=sender, text=text))

        on_message(event, send)

    runtime.listeners.append(heard)


@_takes_run_options
async def async_run(
    message: str,
    agents: Agent | Sequence[Agent] | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Any,
) -> RunResult:
    """Run one turn of `message` and return its result.

    Args:
        message: What the person says.
        agents: One agent or several peers; the first one gets the message (unless
            `starting_agents` names others). They are the pool unless `run_agents` is given.
        options: The run's options (`RunOptions`: each field's docstring says what it does
            and its default); keywords given beside it win.
        **keywords: Any field of `RunOptions`, by name: `tools`, `limits`, `store`,
            `session_id`, `approval`, `gate`, `attachments`, `starting_agents`, `run_agents`,
            `allow_background_agents`, `disabled_tools`, `extra_instructions`,
            `extra_instructions_scope`, `pass_history`, `on_message`, `mcp_servers`,
            `on_elicit`.

    Raises:
        TypeError: A keyword names no option.
    """
    chosen = _options(options, keywords)
    pool, starting = _pool(agents, chosen.starting_agents, chosen.run_agents)
    runtime = _runtime(pool, chosen, peer_messages=chosen.on_message is not None)
    _listen(runtime, chosen.on_message)
    turn = _turn(message, starting, chosen.attachments)
    return await _finish(runtime, runtime.events(), turn)


async def _finish(
    runtime: Runtime, events: AsyncIterator[ev.Event], turn: ops.UserTurn
) -> RunResult:
    collected: list[ev.Event] = []
    submission = runtime.submit(turn)
    try:
        async for event in events:
            _check_taken(event, submission)
            collected.append(event)
            if isinstance(event, ev.TurnFinished):
                break
        finished = await runtime.wait()
    finally:
        runtime.submit(ops.Shutdown())  # frees the session's claim, even when the run raised
        await _stop_servers(runtime)
    assert finished is not None, "a run always ends with turn_finished"
    return RunResult(
        output=finished.output,
        state=finished.state,
        stop_reason=finished.stop_reason,
        session_id=runtime.session_id,
        messages=runtime.conversation(finished.agent),
        events=collected,
        usage=finished.usage,
        cost_usd=finished.cost_usd,
        turns=finished.turns,
    )


@_takes_run_options
def run(
    message: str,
    agents: Agent | Sequence[Agent] | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Any,
) -> RunResult:
    """`async_run` for code without an event loop; takes the same options (`RunOptions`)."""
    return asyncio.run(async_run(message, agents, options=options, **keywords))


def format_trace(result: RunResult | Sequence[ev.Event]) -> str:
    """The run's call tree as text: who called whom with what, messages, and what each
    returned; over a live run's events, each call still open says what it is doing (running,
    waiting for approval, waiting for a message). `moot.core.trace.format_trace`."""
    from moot.core.trace import format_trace as trace

    return trace(result.events if isinstance(result, RunResult) else result)


class BackgroundRun:
    """A run going on while the caller does other things (`run_background`): message its
    agents, ask how one is doing, cancel one, or wait for the result. Everything it knows it
    reads from the run's log."""

    def __init__(self, runtime: Runtime, task_id: str, result: asyncio.Task[RunResult]) -> None:
        self.runtime = runtime
        self.task_id = task_id
        """The person's turn: its first call's id."""
        self._result = result

    def send_message(self, task_id: str, message: str) -> str:
        """Send `message` to the running agent `task_id` (a task id or an agent's name); it
        reads it at its next step. Returns who got it.

        Raises:
            LookupError: No such agent is running.
        """
        events = self.runtime.store.events(self.runtime.session_id)
        before = events[-1].seq if events else 0
        self.runtime.submit(ops.SendMessage(to=task_id, text=message))
        (answer,) = self.runtime.store.events(self.runtime.session_id, after_seq=before)[:1]
        if isinstance(answer, ev.OpRefused):
            raise LookupError(answer.reason)
        assert isinstance(answer, ev.MessageSent)
        return f"Message sent to {answer.to_agent} (task_id: {answer.to_call_id})"

    def status(self, task_id: str | None = None) -> str:
        """The status and messages of one task (the run itself when None)."""
        from moot.core.trace import agent_status

        events = self.runtime.store.events(self.runtime.session_id)
        return agent_status(events, task_id or self.task_id)

    def cancel(self, task_id: str) -> None:
        """Cancel one background agent and its subtree; the run goes on."""
        self.runtime.submit(ops.CancelAgent(task_id=task_id))

    async def result(self) -> RunResult:
        return await self._result


@_takes_run_options
async def run_background(
    message: str,
    agents: Agent | Sequence[Agent] | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Any,
) -> BackgroundRun:
    """Start a run and return at once (once its first event is stored) with a handle on it;
    takes `async_run`'s options (`RunOptions`). Needs a running event loop: the run goes on
    in it."""
    chosen = _options(options, keywords)
    pool, starting = _pool(agents, chosen.starting_agents, chosen.run_agents)
    # The person can always message a running agent; the agents get the tools with the run.
    runtime = _runtime(pool, chosen, peer_messages=True)
    attachments = chosen.attachments
    on_message = chosen.on_message
    _listen(runtime, on_message)
    events = runtime.events()
    loop = asyncio.get_running_loop()
    started: asyncio.Future[str] = loop.create_future()

    async def watching() -> AsyncIterator[ev.Event]:
        async for event in events:
            if not started.done() and event.run_id:
                started.set_result(event.run_id)
            yield event

    def never_started(task: asyncio.Task[RunResult]) -> None:
        if not started.done():
            why = None if task.cancelled() else task.exception()
            started.set_exception(why or RuntimeError("the run ended before it started"))

    task = loop.create_task(_finish(runtime, watching(), _turn(message, starting, attachments)))
    task.add_done_callback(never_started)
    return BackgroundRun(runtime, await started, task)


def send_message(run: BackgroundRun, task_id: str, message: str) -> str:
    """The seed's `send_message`, over a run's handle (moot keeps no registry of runs):
    `run.send_message(task_id, message)`."""
    return run.send_message(task_id, message)


def get_agent_status(run: BackgroundRun, task_id: str | None = None) -> str:
    """The seed's `get_agent_status`, over a run's handle: `run.status(task_id)`."""
    return run.status(task_id)
