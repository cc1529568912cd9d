"""The runtime handle: ops in (`submit`), events out (`subscribe`), nothing else.

Front ends (headless, TUI, REPL, ACP, the Python API) all talk to a session through this. The
runtime owns the session's state (its conversations, permission mode and models) and answers
every op with events carrying the op's submission id. What it is made with is
`core/options.py::RuntimeOptions`; the work it runs in a task (turns, resumes, compactions) and
the ops that reach into it are `core/run_tasks.py`; the answers to the ops that change the
session outside a run (and the turn a `RunCommand` starts) are `core/session_ops.py`; the
person's own tool calls, `core/person_calls.py`. What reaches beyond the log (the commands and
memory of the session's files, its file snapshots, its MCP servers) it reaches through the
seams of its options (`RuntimeOptions.commands`, `.snapshots`, `.mcp`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

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
from moot.core.session_ops import (
    command_turn,
    compact_refusal,
    mcp_server_op,
    network_answer,
    note_to_memory,
    op_refused,
    rename,
    restore_files,
    set_mode,
    set_model,
    turn_refusal,
    unusable_model,
)
from moot.core.session_providers import SessionProviders
from moot.core.subscribers import Subscribers
from moot.core.vision import Vision
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import HasModes
from moot.protocol.client import ContextPart
from moot.protocol.messages import AttachedFile, Message, with_data
from moot.protocol.modes import ModeName
from moot.protocol.subscription import Subscription
from moot.store.base import Store
from moot.tools.base import SideEffect

if TYPE_CHECKING:
    from moot.core.titling import Titler  # annotations only: see `model_titles`
    from moot.providers.base import Provider


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
        self._unusable_model = partial(unusable_model, options.resolve)
        self._vision = Vision(self._provider_for, options.resolve)
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

    def provider(self) -> Provider:
        """The first agent's model as it is now, for a request outside every run (a server's)."""
        return self._provider_for(self.entry)

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
        self._submissions += 1
        submission = f"sub_{self._submissions}"
        if self._shut_down and not isinstance(op, ops.Shutdown):
            return submission
        if why := self.refusal(op):
            self.record_session(op_refused(op, why, submission))
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
            case ops.RunCommand():
                self._command(op, submission)
            case ops.Interrupt():
                # The person's tool calls stop at once (`run_tools_interrupted` answers for
                # them); the turn or compaction after its first step (its end answers).
                stopped = self._person.interrupt(submission)
                self._runs.interrupt(submission, alone=not stopped)
            case ops.Approve(tool_call_id=tool_call, call_id=call):
                self._approval_answer(op, call, tool_call, Answer.approving(op, submission))
            case ops.Deny(tool_call_id=tool_call, call_id=call, feedback=feedback):
                answer = Answer(approved=False, feedback=feedback, submission_id=submission)
                self._approval_answer(op, call, tool_call, answer)
            case ops.RunTool(tool=name, arguments=arguments):
                self._person.start(name, arguments, submission)
            case ops.Compact():
                self._compact(op, submission)
            case ops.SendMessage(to=to, text=text):
                self._runs.message(to, text, submission)
            case ops.CancelAgent(task_id=task_id):
                self._runs.cancel_agent(task_id, submission)
            case ops.NoteToMemory():
                self._note(op, submission)
            case ops.Shutdown():
                self._shut_down = True
                self._runs.cancel()
                self._release_when_idle()
                self._person.cancel()
                self._subscribers.end()
            case _:
                self.record_session(self._session_answer(op, submission))

    def _session_answer(self, op: ops.Op, submission: str) -> ev.Event:
        """The one event that answers an op changing the session outside its runs."""
        match op:
            case ops.SetMode(mode=mode):
                return set_mode(
                    self._session, mode, has_modes=self._has_modes, submission=submission
                )
            case ops.SetModel(model=model, agent=name):
                return set_model(
                    self.agents.get(name) if name else self.entry,
                    model,
                    agents=self.agents,
                    name=name,
                    running=self.running,
                    resolve=self.options.resolve,
                    submission=submission,
                )
            case ops.Rename(title=title):
                info = self.store.session(self.session_id)
                previous = info.title if info is not None else ""
                return rename(title, previous=previous, submission=submission)
            case ops.RestoreFiles():
                return restore_files(
                    op, self.options.snapshots, store=self.store, running=self.running,
                    session_id=self.session_id, submission=submission,
                )  # fmt: skip
            case ops.ApproveMcpServer() | ops.RestartMcpServer() | ops.AnswerMcpQuestion():
                return mcp_server_op(op, self.options.mcp, submission)
            case ops.AnswerNetworkAccess():
                return network_answer(op, self.options.network, submission)
        raise AssertionError(f"no answer for {op.kind}")  # every op kind is matched above

    def refusal(self, op: ops.Op) -> str:
        """Why the session cannot take `op` now ("" when it can, or when only carrying it out
        can tell): a turn while one runs, a resume with nothing to resume, an interrupt with
        nothing running. `submit` answers such an op with `op_refused` carrying this."""
        match op:
            case ops.UserTurn():
                return self._turn_refusal(op)
            case ops.ResumeRun():
                if busy := self._runs.busy():
                    return busy
                if self._session.open_run is None:
                    return f"session {self.session_id} has no unfinished turn to resume"
            case ops.Interrupt() if not self.running and not self._person.running:
                return "nothing is running to interrupt"
        return ""

    def _turn_refusal(self, op: ops.UserTurn) -> str:
        """Why `op` cannot start a turn now ("" when it can): see `session_ops.turn_refusal`."""
        return turn_refusal(
            op,
            busy=self._runs.busy(),
            session=self._session,
            agents=self.agents,
            entry=self.entry,
            unusable_model=self._unusable_model,
        ) or self._vision.refusal(op, self.agents, self.entry)

    def _command(self, op: ops.RunCommand, submission: str) -> None:
        """`RunCommand`: the turn its expansion makes, then what it pre-approves for it."""
        commands = self.options.commands
        started = command_turn(
            op, commands, turn_refusal=self._turn_refusal, unusable_model=self._unusable_model
        )
        if isinstance(started, str):
            # Refused before anything is granted: a grant waits for a turn that would not come.
            self.record_session(op_refused(op, started, submission))
            return
        turn, expansion = started
        self._runs.start(self._turn(turn, submission))
        if expansion.allowed_tools and commands is not None:
            commands.grant(op.agent or self.entry.name, expansion)

    def _note(self, op: ops.NoteToMemory, submission: str) -> None:
        """`NoteToMemory`: `memory_noted`; the agents read the new memory from their next model
        request on."""
        noted, renewed = note_to_memory(op, self.options.commands, self.agents.values(), submission)
        self.record_session(noted)
        for agent in renewed:
            self.agents[agent.name] = agent
            if self.entry.name == agent.name:
                self.entry = agent

    def _approval_answer(
        self, op: ops.Approve | ops.Deny, call: str, tool_call: str, answer: Answer
    ) -> None:
        why = self._pending.answer(call, tool_call, answer)
        if why:
            self.record_session(op_refused(op, why, answer.submission_id))

    def _compact(self, op: ops.Compact, submission: str) -> None:
        """Compact an agent's conversation between turns, in the session's task."""
        from moot.core.compact import compact_history  # lazy: most sessions never compact

        agent = self.agents.get(op.agent) if op.agent else self.entry
        running = self.running
        why = compact_refusal(
            self._session, agent, agents=self.agents, name=op.agent, running=running
        )
        if why or agent is None:
            self.record_session(op_refused(op, why, submission))
            return
        hooks, focus = self.options.hooks, op.focus
        base = {"session_id": self.session_id, "permission_mode": self.mode or "default"}
        pre_compact = None
        if hooks is not None:
            pre_compact = partial(hooks.run_pre_compact, base, custom_instructions=focus)
        answer = partial(
            compact_history,
            agent.name,
            self._session.history.get(agent.name, []),
            provider=partial(self._provider_for, agent),
            focus=focus,
            compact_at=self.limits.compact_at,
            pre_compact=pre_compact,
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

    async def tools_done(self) -> None:
        """Wait until the person's tool calls have ended (after `Shutdown`, their `tool_ran`)."""
        await self._person.done()

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
        held = self._session.history.get(agent or self.entry.name, ())
        return [with_data(m, self.store.attachment_data) for m in held]

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
                lambda path: self._person.refusal("read", SideEffect.READ_ONLY, {"path": path}),
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
