"""The runtime handle: ops in (`submit`), events out (`events`), nothing else.

Front ends (headless, TUI, REPL, ACP, the Python API) all talk to a session through this.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from moot.core.agent import Agent
from moot.core.approval import AllowAll, Answer, PendingApprovals
from moot.core.fold import RunFold
from moot.core.limits import Limits
from moot.core.loop import CallRunner
from moot.core.peers import CALL_AGENT
from moot.core.run import RunContext, TurnEnd
from moot.core.session import CHECKPOINT, load_session
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy, HasModes
from moot.protocol.client import Subscription
from moot.protocol.ids import new_id
from moot.protocol.messages import Message
from moot.protocol.modes import ModeName
from moot.providers.base import Provider, ScriptPosition
from moot.providers.registry import resolve_model
from moot.store.base import Store
from moot.tools.base import Tool

if TYPE_CHECKING:
    from moot.core.gate import TurnGate  # annotations only: gates are for library users
    from moot.hooks.runner import Hooks  # annotations only: no hooks set, no import


class RuntimeBusy(RuntimeError):
    """An op needs an idle session, or a run, that is not there."""


class Runtime:
    """One session's runtime: its agents, tools, limits and policies.

    Args:
        agents: The peers; the first one answers the person unless a turn names another.
        store: Where the event log lives (SQLite or in memory).
        session_id: Continue this session; a new one is created when None.
        tools: Tools every agent has.
        limits: Bounds for each new run.
        approval: Settles tool approvals; `AllowAll` until permission rules exist.
        mode: The permission mode of a session that never switched (`mode_changed`); a resumed
            session keeps its own. None: the approval policy's `default_mode` (`HasModes`), or
            no modes at all (`SetMode` is refused).
        gate: A turn gate that sees each completed model turn.
        hooks: Hook commands from the settings (`moot.hooks`); None runs none.
        turn_end: What the session does as each turn ends, before `turn_finished` (moot's
            auto-commit); None does nothing.
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
        mode: ModeName | None = None,
        gate: TurnGate | None = None,
        hooks: Hooks | None = None,
        turn_end: TurnEnd | None = None,
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
        if mode is None and isinstance(self.approval, HasModes):
            mode = self.approval.default_mode
        self.gate = gate
        if session_id is None:
            session_id = store.create_session(title=title, workspace=workspace).id
        elif store.session(session_id) is None:
            raise KeyError(f"no session {session_id!r}")
        self.session_id = session_id
        self._session = load_session(store, session_id, self.limits)
        if mode is not None and self._session.mode is None:
            self._session.mode = mode
        self._has_modes = mode is not None or self._session.mode is not None
        self.hooks = hooks
        self.turn_end = turn_end
        # SessionStart runs once per runtime, when its first run starts.
        earlier = self._session.history or self._session.open_run
        self._session_start: str | None = "resume" if earlier else "startup"
        self._providers: dict[str | int, Provider] = {}
        """Providers by model name, or by the `id` of a provider given as an object."""
        self._resolve = resolve
        self._pending = PendingApprovals()
        self._subscribers: list[Subscription] = []
        self._task: asyncio.Task[None] | None = None
        self._run: RunContext | None = None
        self._submissions = 0

    # ---- the two channels ------------------------------------------------------------------

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        """The session's events, each after it is stored: with `after_seq`, those already
        stored after it first (a replay), then live ones; without, live ones from now on.

        No event is missed or repeated where the replay meets the live stream: both are taken
        in this one call, and events are only ever appended on the event loop's thread.
        """
        replay = (
            () if after_seq is None else self.store.events(self.session_id, after_seq=after_seq)
        )
        subscription = Subscription(replay, on_close=self._unsubscribe)
        self._subscribers.append(subscription)
        return subscription

    def events(self) -> Subscription:
        """Every event from now on: `subscribe()`."""
        return self.subscribe()

    def submit(self, op: ops.Op) -> str:
        """Hand the runtime an op; returns its submission id, carried by the events that
        answer it. An op that matches nothing (an `Approve` no call waits for) is answered by
        `op_refused`.

        Raises:
            RuntimeBusy: a turn is submitted while one runs, or there is no run to resume.
            ValueError: the op does not fit its schema (`UserTurn(text=5)`); nothing happens.
        """
        op = ops.checked(op)
        submission = self.new_submission()
        match op:
            case ops.UserTurn():
                self._start(self._turn(op, submission))
            case ops.ResumeRun():
                if self._session.open_run is None:
                    raise RuntimeBusy(f"session {self.session_id} has no unfinished run")
                self._start(self._resume(self._session.open_run, submission))
            case ops.Interrupt():
                if self.running:
                    assert self._task is not None and self._run is not None
                    self._run.submission_id = submission  # what the interrupt ends answers it
                    self._task.cancel()
            case ops.Approve(tool_call_id=tool_call, call_id=call, scope=scope, rule=rule):
                answer = Answer(
                    approved=True, scope=scope, rule=rule, mode=op.mode, submission_id=submission
                )
                self._answer(op, call, tool_call, answer)
            case ops.Deny(tool_call_id=tool_call, call_id=call, feedback=feedback):
                answer = Answer(approved=False, feedback=feedback, submission_id=submission)
                self._answer(op, call, tool_call, answer)
            case ops.SetMode(mode=mode):
                self._set_mode(mode, submission)
            case ops.RunCommand() | ops.NoteToMemory():
                # Commands from files and memory belong to the session layer
                # (`moot.client.local`), which answers these before they reach a runtime.
                self.record_session(
                    ev.OpRefused(
                        op=op.kind,
                        reason="this session reads no skills, commands or memory from files",
                        submission_id=submission,
                    )
                )
            case ops.Shutdown():
                if self._task is not None:
                    self._task.cancel()
                for subscription in self._subscribers:
                    subscription.end()
                self._subscribers.clear()
        return submission

    def new_submission(self) -> str:
        """A fresh submission id: `submit` takes one per op, and so does the session layer for
        an op it answers itself (`RunCommand`, `NoteToMemory`)."""
        self._submissions += 1
        return f"sub_{self._submissions}"

    def _answer(
        self, op: ops.Approve | ops.Deny, call: str, tool_call: str, answer: Answer
    ) -> None:
        why = self._pending.answer(call, tool_call, answer)
        if why:
            self.record_session(
                ev.OpRefused(op=op.kind, reason=why, submission_id=answer.submission_id)
            )

    def _set_mode(self, mode: ModeName, submission: str) -> None:
        previous = self._session.mode
        if not self._has_modes or previous is None:
            self.record_session(
                ev.OpRefused(
                    op="set_mode",
                    reason="this session has no permission modes (no permission rules)",
                    submission_id=submission,
                )
            )
        elif mode != previous:
            self.record_session(
                ev.ModeChanged(mode=mode, previous=previous, submission_id=submission)
            )

    def record_session(self, event: ev.Event) -> ev.Event:
        """Store a session event (one of `ev.SESSION_KINDS`), apply it to the session state
        (`mode_changed` is the one way the mode changes) and publish it."""
        event = self.store.append(msgspec.structs.replace(event, session_id=self.session_id))
        if isinstance(event, ev.ModeChanged):
            self._session.mode = event.mode
        self._publish(event)
        return event

    def update_agent(self, agent: Agent) -> None:
        """Replace the session's agent of that name (new instructions after a memory note): its
        calls use it from their next model request on.

        Raises:
            KeyError: The session has no agent of that name.
        """
        if agent.name not in self.agents:
            raise KeyError(f"no agent {agent.name!r}")
        self.agents[agent.name] = agent
        if self.entry.name == agent.name:
            self.entry = agent

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
        """Wait for the current run to end; its `turn_finished` event (None if none ran).

        For the runtime's own users (the Python API, the session that closes it); front ends
        wait for `turn_finished` on their subscription instead.
        """
        if self._task is not None:
            try:
                await self._task
            except asyncio.CancelledError:
                if not self._task.cancelled():
                    raise  # the waiter itself was cancelled
        return self._last_finished

    @property
    def mode(self) -> ModeName | None:
        """The session's permission mode now (kept across resumes); None: it has no modes."""
        return self._session.mode if self._has_modes else None

    # ---- runs ------------------------------------------------------------------------------

    _last_finished: ev.TurnFinished | None = None

    def _start(self, work: object) -> None:
        if self.running:
            work.close()  # type: ignore[attr-defined]
            raise RuntimeBusy(f"session {self.session_id} is already running a turn")
        self._task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]

    def _context(self, fold: RunFold, submission: str) -> RunContext:
        session_start, self._session_start = self._session_start, None
        self._run = RunContext(
            store=self.store,
            session_id=self.session_id,
            fold=fold,
            agents=self.agents,
            tools=self.tools,
            provider_for=self._provider_for,
            approval=self.approval,
            pending=self._pending,
            publish=self._publish,
            record_session=self.record_session,
            current_mode=lambda: self.mode,
            submission_id=submission,
            gate=self.gate,
            hooks=self.hooks,
            turn_end=self.turn_end,
            session_start=session_start,
        )
        return self._run

    async def _turn(self, op: ops.UserTurn, submission: str) -> None:
        agent = self.agents[op.agent] if op.agent else self.entry
        fold = RunFold(self.limits, self._session.history)
        self._session.open_run = fold
        run = self._context(fold, submission)
        run_id = new_id("run")
        run.record_as(
            ev.TurnStarted(
                agent=agent.name,
                call_id=run_id,
                parent_call_id=None,
                prompt=op.text,
                attachments=op.attachments,
                limits=self.limits.as_dict(),
                mode=run.mode(),
            ),
        )
        await self._drive(run)

    async def _resume(self, fold: RunFold, submission: str) -> None:
        """Continue an unfinished run; tools that started without a result are not re-run."""
        run = self._context(fold, submission)
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
            root, ev.RunResumed(interrupted_tool_calls=tuple(tc.id for _, tc in interrupted))
        )
        for call, tc in interrupted:
            run.record_interrupted(call, tc)
        await self._drive(run)

    async def _drive(self, run: RunContext) -> None:
        fold = run.fold
        try:
            await CallRunner(run, fold.calls[fold.run_id]).drive()
        finally:
            self._run = None
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

    def _publish(self, event: ev.Event) -> None:
        for subscription in self._subscribers:
            subscription.put(event)

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)
