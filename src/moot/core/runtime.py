"""The runtime handle: ops in (`submit`), events out (`events`), nothing else.

Front ends (headless, TUI, REPL, ACP, the Python API) all talk to a session through this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Self

from moot.core.agent import Agent
from moot.core.approval import (
    AllowAll,
    Answer,
    ApprovalPolicy,
    PendingApprovals,
    RemembersApprovals,
)
from moot.core.fold import RunFold
from moot.core.limits import Limits
from moot.core.loop import CallRunner
from moot.core.peers import CALL_AGENT
from moot.core.run import RunContext, record_session_event
from moot.core.session import CHECKPOINT, load_session
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.ids import new_id
from moot.protocol.messages import Message
from moot.providers.base import Provider, ScriptPosition
from moot.providers.registry import resolve_model
from moot.store.base import Store
from moot.tools.base import Tool

if TYPE_CHECKING:
    from moot.core.gate import TurnGate  # annotations only: gates are for library users
    from moot.hooks.runner import Hooks  # annotations only: no hooks set, no import


class RuntimeBusy(RuntimeError):
    """An op needs an idle session, or a run, that is not there."""


class EventStream:
    """One subscriber's events, from the moment it subscribed; ends at shutdown."""

    _END = object()

    def __init__(self) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue()

    def put(self, event: ev.Event) -> None:
        self._queue.put_nowait(event)

    def close(self) -> None:
        self._queue.put_nowait(self._END)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ev.Event:
        item = await self._queue.get()
        if item is self._END:
            raise StopAsyncIteration
        return item  # type: ignore[return-value]


class Runtime:
    """One session's runtime: its agents, tools, limits and policies.

    Args:
        agents: The peers; the first one answers the person unless a turn names another.
        store: Where the event log lives (SQLite or in memory).
        session_id: Continue this session; a new one is created when None.
        tools: Tools every agent has.
        limits: Bounds for each new run.
        approval: Settles tool approvals; `AllowAll` until permission rules exist.
        gate: A turn gate that sees each completed model turn.
        hooks: Hook commands from the settings (`moot.hooks`); None runs none.
        resolve: Makes an agent's model name (`provider/model`) a provider; by default
            `resolve_model` with the process environment (keys, base URLs).
    """

    def __init__(
        self,
        agents: Sequence[Agent],
        *,
        store: Store,
        session_id: str | None = None,
        tools: Sequence[Tool] = (),
        limits: Limits | None = None,
        approval: ApprovalPolicy | None = None,
        gate: TurnGate | None = None,
        hooks: Hooks | None = None,
        title: str = "",
        workspace: str = "",
        resolve: Callable[[str], Provider] = resolve_model,
    ) -> None:
        if not agents:
            raise ValueError("a runtime needs at least one agent")
        names = [a.name for a in agents]
        if len(set(names)) != len(names):
            raise ValueError(f"agent names must be unique: {names}")
        self.agents = {a.name: a for a in agents}
        self.entry = agents[0]
        self.store = store
        self.tools = {t.name: t for t in tools}
        self.limits = limits or Limits()
        self.approval = approval or AllowAll()
        self.gate = gate
        if session_id is None:
            session_id = store.create_session(title=title, workspace=workspace).id
        elif store.session(session_id) is None:
            raise KeyError(f"no session {session_id!r}")
        self.session_id = session_id
        # One runtime per session, in any process: claimed before the log is read, so what is
        # loaded stays the whole log (SessionBusy when another runtime holds it). Released at
        # Shutdown, once the run has recorded its end.
        self._claim = store.claim(session_id)
        try:
            self._session = load_session(store, session_id, self.limits)
        except BaseException:
            self._claim.release()
            raise
        self.hooks = hooks
        # SessionStart runs once per runtime, when its first run starts.
        earlier = self._session.history or self._session.open_run
        self._session_start: str | None = "resume" if earlier else "startup"
        self._providers: dict[str, Provider] = {}
        self._resolve = resolve
        self._pending = PendingApprovals()
        self._streams: list[EventStream] = []
        self._task: asyncio.Task[None] | None = None
        self._submissions = 0

    # ---- the two channels ------------------------------------------------------------------

    def events(self) -> EventStream:
        """Every event from now on, each after it is stored."""
        stream = EventStream()
        self._streams.append(stream)
        return stream

    def submit(self, op: ops.Op) -> str:
        """Hand the runtime an op; returns its submission id.

        Raises:
            RuntimeBusy: a turn is submitted while one runs, or there is no run to resume.
            ValueError: the op does not fit its schema (`UserTurn(text=5)`); nothing happens.
        """
        op = ops.checked(op)
        self._submissions += 1
        match op:
            case ops.UserTurn():
                self._start(self._turn(op))
            case ops.ResumeRun():
                if self._session.open_run is None:
                    raise RuntimeBusy(f"session {self.session_id} has no unfinished run")
                self._start(self._resume(self._session.open_run))
            case ops.Interrupt():
                if self._task is not None:
                    self._task.cancel()
            case ops.Approve(tool_call_id=call_id, scope=scope, rule=rule, mode=mode):
                answer = Answer(approved=True, scope=scope, rule=rule, mode=mode)
                self._pending.answer(call_id, answer)
            case ops.SetMode(mode=mode):
                if not isinstance(self.approval, RemembersApprovals):
                    raise RuntimeBusy("this runtime's approval policy has no modes")
                previous = self.approval.mode(self.session_id)
                self.approval.set_mode(self.session_id, mode)
                if mode != previous:
                    record_session_event(
                        self.store,
                        self._publish,
                        self.session_id,
                        ev.ModeChanged,
                        {"mode": mode, "previous": previous},
                    )
            case ops.Deny(tool_call_id=call_id, feedback=feedback):
                self._pending.answer(call_id, Answer(approved=False, feedback=feedback))
            case ops.Shutdown():
                if self.running:
                    assert self._task is not None
                    self._task.cancel()
                    self._task.add_done_callback(lambda _: self._claim.release())
                else:
                    self._claim.release()
                self._end_streams()
        return f"sub_{self._submissions}"

    @property
    def unfinished_run(self) -> str | None:
        """The run id a crash left open, if any (resume it with `ResumeRun`)."""
        run = self._session.open_run
        return run.run_id if run else None

    def conversation(self, agent: str | None = None) -> list[Message]:
        """An agent's conversation with the person over the finished runs, as its model saw it."""
        return list(self._session.history.get(agent or self.entry.name, ()))

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def wait(self) -> ev.TurnFinished | None:
        """Wait for the current run to end; its `turn_finished` event (None if none ran)."""
        if self._task is not None:
            try:
                await self._task
            except asyncio.CancelledError:
                if not self._task.cancelled():
                    raise  # the waiter itself was cancelled
        return self._last_finished

    # ---- runs ------------------------------------------------------------------------------

    _last_finished: ev.TurnFinished | None = None

    def _start(self, work: object) -> None:
        if self.running:
            work.close()  # type: ignore[attr-defined]
            raise RuntimeBusy(f"session {self.session_id} is already running a turn")
        self._task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
        self._task.add_done_callback(self._after_run)

    def _after_run(self, task: asyncio.Task[None]) -> None:
        # A run that raised could not record its end (the store failed: a full disk, a
        # damaged file): no turn_finished will come, so nobody may wait for one. The streams
        # end, and `wait()` raises what the run raised.
        if not task.cancelled() and task.exception() is not None:
            self._end_streams()

    def _end_streams(self) -> None:
        for stream in self._streams:
            stream.close()
        self._streams.clear()

    def _context(self, fold: RunFold) -> RunContext:
        session_start, self._session_start = self._session_start, None
        return RunContext(
            store=self.store,
            session_id=self.session_id,
            fold=fold,
            agents=self.agents,
            tools=self.tools,
            provider_for=self._provider_for,
            approval=self.approval,
            pending=self._pending,
            publish=self._publish,
            gate=self.gate,
            hooks=self.hooks,
            session_start=session_start,
        )

    async def _turn(self, op: ops.UserTurn) -> None:
        agent = self.agents[op.agent] if op.agent else self.entry
        fold = RunFold(self.limits, self._session.history)
        self._session.open_run = fold
        run = self._context(fold)
        run_id = new_id("run")
        run.record_as(
            ev.TurnStarted,
            agent=agent.name,
            call_id=run_id,
            parent_call_id=None,
            prompt=op.text,
            attachments=op.attachments,
            limits=self.limits.as_dict(),
            mode=run.mode(),
        )
        await self._drive(run)

    async def _resume(self, fold: RunFold) -> None:
        """Continue an unfinished run; tools that started without a result are not re-run."""
        run = self._context(fold)
        # A peer call that was running is not a side effect of its own: the callee's call
        # resumes instead (see CallRunner._call_peer). Every other running tool is interrupted.
        interrupted = [
            (call, tc)
            for call in fold.calls.values()
            if not call.state.terminal
            for tc in call.running_tools
            if tc.name != CALL_AGENT
        ]
        root = fold.calls[fold.run_id]
        run.record(
            root,
            ev.RunResumed,
            interrupted_tool_calls=tuple(tc.id for _, tc in interrupted),
        )
        for call, tc in interrupted:
            run.record_interrupted(call, tc)
        await self._drive(run)

    async def _drive(self, run: RunContext) -> None:
        fold = run.fold
        try:
            await CallRunner(run, fold.calls[fold.run_id]).drive()
        finally:
            self._last_finished = fold.finished
            if fold.finished is not None:
                self._session.finish_run(fold)
                self.store.save_checkpoint(
                    self.session_id, CHECKPOINT, fold.finished.seq, self._session.checkpoint()
                )

    def _provider_for(self, agent: Agent) -> Provider:
        """The agent's provider, made once per model and moved past turns already played."""
        model = agent.model
        if not model:
            raise ValueError(f"agent {agent.name!r} has no model")
        key = model if isinstance(model, str) else id(model)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._resolve(model) if isinstance(model, str) else model
            self._providers[key] = provider
            if isinstance(provider, ScriptPosition):
                # Only the turns of agents that share this very model were played from it.
                for peer in self.agents.values():
                    turns = self._session.model_turns.get(peer.name, 0)
                    if turns and (peer.model is model or peer.model == model):
                        provider.fast_forward(peer.name, turns)
        return provider

    @property
    def mode(self) -> str | None:
        """The permission mode this session last switched to (kept across resumes), if any."""
        return self._session.mode

    def _publish(self, event: ev.Event) -> None:
        if isinstance(event, ev.ModeChanged):
            self._session.mode = event.mode
        for stream in self._streams:
            stream.put(event)
