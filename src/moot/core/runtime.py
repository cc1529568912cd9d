"""The runtime handle: ops in (`submit`), events out (`subscribe`), nothing else.

Front ends (headless, TUI, REPL, ACP, the Python API) all talk to a session through this. The
runtime owns the session's state (its conversations, permission mode and models) and answers
every op with events carrying the op's submission id. What it is made with is
`core/options.py::RuntimeOptions`; the work it runs in a task (turns, resumes, compactions) and
the ops that reach into it are `core/run_tasks.py`; the answers to the ops that change the
session outside a run are `core/session_ops.py`; the person's own tool calls,
`core/person_calls.py`.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from moot.core.agent import Agent
from moot.core.approval import AllowAll, Answer, PendingApprovals
from moot.core.context_report import context_parts
from moot.core.fold import RunFold
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions, check
from moot.core.person_calls import PersonCalls
from moot.core.run import RunContext
from moot.core.run_tasks import RunTasks, turn_opening
from moot.core.session import load_session
from moot.core.session_ops import compact_refusal, rename, set_mode, set_model, turn_refusal
from moot.core.session_providers import SessionProviders
from moot.core.subscribers import Subscribers
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import HasModes
from moot.protocol.client import ContextPart, Subscription
from moot.protocol.messages import AttachedFile, Message
from moot.protocol.modes import ModeName
from moot.providers.registry import UnknownModel
from moot.store.base import Store
from moot.tools.base import SideEffect

if TYPE_CHECKING:
    from moot.core.titling import Titler  # annotations only: see `model_titles`


class Runtime:
    """One session's runtime: its agents, tools, limits and policies.

    Args:
        agents: The peers; the first one answers the person unless a turn names another.
        store: Where the event log lives (SQLite or in memory).
        session_id: Continue this session; a new one is created when None (titled
            `options.title`, in `options.workspace`).
        options: Everything else (`RuntimeOptions`: tools, limits, policies, hooks, peers);
            None: the defaults.

    Raises:
        ValueError: No agents, two of one name, `finish` disabled, an unknown `extra_scope`,
            or a person tool named like a tool of the model's.
        KeyError: The store has no session `session_id`.
        SessionBusy: Another runtime holds the session (`Store.claim`).
    """

    def __init__(
        self,
        agents: Sequence[Agent],
        *,
        store: Store,
        session_id: str | None = None,
        options: RuntimeOptions | None = None,
    ) -> None:
        options = options or RuntimeOptions()
        check(agents, options)
        self.options = options
        self.agents = {a.name: a for a in agents}
        self.entry = agents[0]
        self.store = store
        self.tools = {t.name: t for t in options.tools}
        self.person_tools = options.person_tools or {}
        self.limits = options.limits or Limits()
        self.approval = options.approval or AllowAll()
        if session_id is None:
            session_id = store.create_session(title=options.title, workspace=options.workspace).id
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
        self._has_modes = self._adopt_mode(options.mode)
        for name, model in self._session.models.items():
            # The model belongs to the session, as the mode does: the last switch wins.
            if name in self.agents and isinstance(self.agents[name].model, str):
                self.agents[name] = msgspec.structs.replace(self.agents[name], model=model)
        self.entry = self.agents[self.entry.name]
        # SessionStart runs once per runtime, when its first run starts.
        earlier = self._session.history or self._session.open_run
        self._session_start: str | None = "resume" if earlier else "startup"
        self._provider_for = SessionProviders(store, session_id, self.agents, options.resolve)
        self._pending = PendingApprovals()
        self._subscribers = Subscribers()
        self.listeners = self._subscribers.listeners
        """Called with each event as it is published, in the runtime's own step (the Python
        API's `on_message` answers an agent before its next step through this)."""
        self._submissions = 0
        self._shut_down = False
        self._person = PersonCalls(
            session_id=session_id,
            tools=self.tools,
            person_tools=self.person_tools,
            approval=self.approval,
            mode=lambda: self.mode,
            record_session=self.record_session,
        )
        self._runs = RunTasks(
            session=self._session,
            limits=self.limits,
            new_run=self._new_run,
            record_session=self.record_session,
            closed=lambda: self._shut_down,
            on_failure=self._subscribers.end,
            on_finished=self._finished,
        )
        self._titler: Titler | None = None
        if options.model_titles:
            from moot.core.titling import Titler  # lazy: only sessions with the setting ask

            entry = lambda: self.entry  # noqa: E731  # as it is when asked (a model switch)
            self._titler = Titler(store, session_id, entry, self._provider_for, self.record_session)

    def _adopt_mode(self, mode: ModeName | None) -> bool:
        """Give a session that never switched modes `mode` (the policy's default when None);
        whether the session has modes at all."""
        if mode is None and isinstance(self.approval, HasModes):
            mode = self.approval.default_mode
        if mode is not None and self._session.mode is None:
            self._session.mode = mode
        return mode is not None or self._session.mode is not None

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
        return self._subscribers.add(replay)

    def events(self) -> Subscription:
        """Every event from now on: `subscribe()`."""
        return self.subscribe()

    def submit(self, op: ops.Op) -> str:
        """Hand the runtime an op; returns its submission id, carried by the events that
        answer it. An op that matches nothing (an `Approve` no call waits for, an `Interrupt`
        with nothing running) or that the session cannot take now (a turn while one runs) is
        answered by `op_refused`: a front end never gets an exception for the session's state.

        After `Shutdown` the session takes nothing more: an op is answered by nothing, since
        its streams have ended and its claim is let go (no event may be stored any more).

        Raises:
            ValueError: the op does not fit its schema (`UserTurn(text=5)`); nothing happens.
        """
        op = ops.checked(op)
        submission = self.new_submission()
        if self._shut_down and not isinstance(op, ops.Shutdown):
            return submission
        if why := self.refusal(op):
            self.record_session(ev.OpRefused(op=op.kind, reason=why, submission_id=submission))
            return submission
        self._take(op, submission)
        return submission

    def _take(self, op: ops.Op, submission: str) -> None:
        """Carry out an op the session can take now; what it does answers it."""
        match op:
            case ops.UserTurn():
                self._runs.start(self._turn(op, submission))
            case ops.ResumeRun():
                assert self._session.open_run is not None  # `refusal` said so
                self._runs.start(self._runs.resume(self._session.open_run, submission))
            case ops.Interrupt():
                self._runs.interrupt(submission, alone=not self._person.running)
                self._person.cancel()
            case ops.Approve(tool_call_id=tool_call, call_id=call, scope=scope, rule=rule):
                answer = Answer(
                    approved=True, scope=scope, rule=rule, mode=op.mode, submission_id=submission
                )
                self._approval_answer(op, call, tool_call, answer)
            case ops.Deny(tool_call_id=tool_call, call_id=call, feedback=feedback):
                answer = Answer(approved=False, feedback=feedback, submission_id=submission)
                self._approval_answer(op, call, tool_call, answer)
            case ops.SetMode(mode=mode):
                self._answer(
                    set_mode(self._session, mode, has_modes=self._has_modes, submission=submission)
                )
            case ops.SetModel(model=model, agent=name):
                agent = self.agents.get(name) if name else self.entry
                switch = set_model(
                    agent,
                    model,
                    agents=self.agents,
                    name=name,
                    running=self.running,
                    resolve=self.options.resolve,
                    submission=submission,
                )
                self._answer(switch)
            case ops.RunTool(tool=name, arguments=arguments):
                self._person.start(name, arguments, submission)
            case ops.Rename(title=title):
                info = self.store.session(self.session_id)
                previous = info.title if info is not None else ""
                self._answer(rename(title, previous=previous, submission=submission))
            case ops.Compact(focus=focus, agent=name):
                self._compact(focus, name, submission)
            case ops.RunCommand() | ops.NoteToMemory():
                # Commands from files and memory belong to the session layer
                # (`moot.client.local`), which answers these before they reach a runtime.
                reason = "this session reads no skills, commands or memory from files"
                self._answer(ev.OpRefused(op=op.kind, reason=reason, submission_id=submission))
            case ops.SendMessage(to=to, text=text):
                self._runs.message(to, text, submission)
            case ops.CancelAgent(task_id=task_id):
                self._runs.cancel_agent(task_id, submission)
            case ops.Shutdown():
                self._shut_down = True
                self._runs.cancel()
                self._release_when_idle()
                self._person.cancel()
                self._subscribers.end()

    def refusal(self, op: ops.Op) -> str:
        """Why the session cannot take `op` now ("" when it can, or when only carrying it out
        can tell): a turn while one runs, a resume with nothing to resume, an interrupt with
        nothing running. `submit` answers such an op with `op_refused` carrying this."""
        match op:
            case ops.UserTurn():
                return self.turn_refusal(op)
            case ops.ResumeRun():
                if busy := self._runs.busy():
                    return busy
                if self._session.open_run is None:
                    return f"session {self.session_id} has no unfinished turn to resume"
            case ops.Interrupt() if not self.running and not self._person.running:
                return "nothing is running to interrupt"
        return ""

    def turn_refusal(self, op: ops.UserTurn) -> str:
        """Why `op` cannot start a turn now ("" when it can): one runs (busy comes first, as
        for any turn), its model cannot be used, it names an agent the session lacks, or the
        log holds a turn a crash left open."""
        return turn_refusal(
            op,
            busy=self._runs.busy(),
            session=self._session,
            agents=self.agents,
            entry=self.entry,
            unusable_model=self.unusable_model,
        )

    def unusable_model(self, model: str) -> str:
        """Why `model` cannot answer a turn ("" when it can): a bad name, a missing key."""
        try:
            self.options.resolve(model)
        except UnknownModel as exc:
            return str(exc)
        return ""

    def new_submission(self) -> str:
        """A fresh submission id: `submit` takes one per op, and so does the session layer for
        an op it answers itself (`RunCommand`, `NoteToMemory`)."""
        self._submissions += 1
        return f"sub_{self._submissions}"

    def _answer(self, event: ev.Event | None) -> None:
        """Record the event that answers an op (None: the op changes nothing, as a switch to
        the mode the session is in)."""
        if event is not None:
            self.record_session(event)

    def _approval_answer(
        self, op: ops.Approve | ops.Deny, call: str, tool_call: str, answer: Answer
    ) -> None:
        why = self._pending.answer(call, tool_call, answer)
        if why:
            self.record_session(
                ev.OpRefused(op=op.kind, reason=why, submission_id=answer.submission_id)
            )

    def _compact(self, focus: str, name: str | None, submission: str) -> None:
        """Compact an agent's conversation between turns, in the session's task."""
        from moot.core.compact import compact_history  # lazy: most sessions never compact

        agent = self.agents.get(name) if name else self.entry
        why = compact_refusal(
            self._session, agent, agents=self.agents, name=name, running=self.running
        )
        if why:
            self.record_session(ev.OpRefused(op="compact", reason=why, submission_id=submission))
            return
        assert agent is not None
        hooks = self.options.hooks

        async def pre_compact() -> object:
            assert hooks is not None
            base = {"session_id": self.session_id, "permission_mode": self.mode or "default"}
            return await hooks.run_pre_compact(base, trigger="manual", custom_instructions=focus)

        def answer() -> Coroutine[Any, Any, ev.Event]:
            return compact_history(
                agent.name,
                self._session.history.get(agent.name, []),
                provider=lambda: self._provider_for(agent),
                focus=focus,
                compact_at=self.limits.compact_at,
                pre_compact=pre_compact if hooks is not None else None,
                submission=submission,
            )

        self._runs.start_compaction(answer, submission)

    def _release_when_idle(self, _: object = None) -> None:
        """Let the claim go once neither the run nor a title request can record anything."""
        titling = self._titler.task if self._titler is not None else None
        busy = [t for t in (self._runs.task, titling) if t is not None and not t.done()]
        if busy:
            busy[0].add_done_callback(self._release_when_idle)
        else:
            self._claim.release()

    def record_session(self, event: ev.Event) -> ev.Event:
        """Store a session event (one of `ev.SESSION_KINDS`), apply it to the session state
        (`mode_changed` is the one way the mode changes, `model_changed` the one way a model
        does) and publish it."""
        event = self.store.append(msgspec.structs.replace(event, session_id=self.session_id))
        if isinstance(event, ev.ModeChanged):
            self._session.mode = event.mode
        elif isinstance(event, ev.HistoryCompacted):
            self._session.compact(event)
        elif isinstance(event, ev.ModelChanged) and event.agent in self.agents:
            self._session.models[event.agent] = event.model
            agent = msgspec.structs.replace(self.agents[event.agent], model=event.model)
            self.agents[event.agent] = agent
            if agent.name == self.entry.name:
                self.entry = agent
        self._subscribers.publish(event)
        return event

    # ---- what the session is and holds ------------------------------------------------------

    def person_refusal(self, tool: str, side_effect: SideEffect, arguments: dict[str, Any]) -> str:
        """Why a deny rule forbids the person this call ("" when none does).

        The person's calls pass the one decision in `bypassPermissions` mode: they typed the
        call, so no question is asked (they would be the one asked), but a deny rule holds for
        them as for any model, and with it the files it hides.
        """
        return self._person.refusal(tool, side_effect, arguments)

    async def tools_done(self) -> None:
        """Wait until the person's tool calls have ended (after `Shutdown`, their `tool_ran`)."""
        await self._person.done()

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

    def provider_window(self, agent: str | None = None) -> int | None:
        """The context window the agent's provider itself reports (a script's
        `context_window:`); None when nothing bounds it."""
        from moot.providers.base import model_info

        info = model_info(self._provider_for(self.agents[agent] if agent else self.entry))
        return info.context_window if info is not None else None

    @property
    def unfinished_run(self) -> str | None:
        """The run id a crash left open, if any (resume it with `ResumeRun`)."""
        run = self._session.open_run
        return run.run_id if run else None

    def conversation(self, agent: str | None = None) -> list[Message]:
        """An agent's conversation with the person over the finished runs, as its model saw it."""
        return list(self._session.history.get(agent or self.entry.name, ()))

    def context_parts(self, agent: str | None = None) -> list[ContextPart]:
        """What the agent's model would read with its next request, part by part, each
        estimated as the pre-flight check estimates a request (`estimate_tokens`)."""
        chosen = self.agents[agent] if agent else self.entry
        history = self._session.history.get(chosen.name, [])
        return context_parts(chosen, list(self.agents.values()), self.tools, history, self.options)

    @property
    def running(self) -> bool:
        return self._runs.running

    @property
    def failure(self) -> str:
        """Why the last run (or compaction) raised instead of recording its end ("" when it
        did not): the store failed. Front ends read it when their stream ends early."""
        return self._runs.failure

    async def wait(self) -> ev.TurnFinished | None:
        """Wait for the current run to end; its `turn_finished` event (None if none ran).

        For the runtime's own users (the Python API, the session that closes it); front ends
        wait for `turn_finished` on their subscription instead.
        """
        return await self._runs.wait()

    @property
    def mode(self) -> ModeName | None:
        """The session's permission mode now (kept across resumes); None: it has no modes."""
        return self._session.mode if self._has_modes else None

    async def title_written(self, timeout: float) -> None:
        """Wait for a title request under way (`model_titles`) to record its answer, at most
        `timeout` seconds; one that takes longer is cancelled."""
        if self._titler is not None:
            await self._titler.written(timeout)

    # ---- runs ------------------------------------------------------------------------------

    async def _turn(self, op: ops.UserTurn, submission: str) -> None:
        """The turn `op` asks for, in the session's task: what opens it, then the run."""
        await self._runs.turn(self._opening(op), submission)

    def _opening(self, op: ops.UserTurn) -> ev.TurnStarted:
        files: Sequence[AttachedFile] = ()
        if self.options.attach is not None and "@" in op.text:
            files = self.options.attach(
                op.text,
                lambda path: self.person_refusal("read", SideEffect.READ_ONLY, {"path": path}),
            )
        agents, entry = self.agents, self.entry
        return turn_opening(op, agents, entry, files=files, limits=self.limits, mode=self.mode)

    def _new_run(self, fold: RunFold, submission: str) -> RunContext:
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
            publish=self._subscribers.publish,
            record_session=self.record_session,
            current_mode=lambda: self.mode,
            settings=self.options,
            submission_id=submission,
            session_start=session_start,
        )

    def _finished(self, fold: RunFold) -> None:
        """Take a run that recorded `turn_finished` in: the session's checkpoint, then the
        title request a session's first turn may make (`model_titles`)."""
        assert fold.finished is not None
        self._session.finish_run(fold)
        self._session.save(self.store, self.session_id, fold.finished.seq)
        if self._titler is not None and not self._shut_down:
            self._titler.consider(fold.finished)
