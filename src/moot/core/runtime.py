"""The runtime handle: ops in (`submit`), events out (`events`), nothing else.

Front ends (headless, TUI, REPL, ACP, the Python API) all talk to a session through this.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from moot.core.agent import Agent
from moot.core.approval import AllowAll, Answer, PendingApprovals
from moot.core.fold import CallState, RunFold
from moot.core.limits import Limits
from moot.core.loop import CallRunner
from moot.core.peer_calls import end_undriven
from moot.core.peers import PEER_CALLS
from moot.core.run import RunContext, RunSettings, TurnEnd
from moot.core.session import CHECKPOINT, load_session
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy, ApprovalRequest, HasModes
from moot.protocol.client import ContextPart, Subscription
from moot.protocol.ids import new_id
from moot.protocol.messages import AttachedFile, Message, ToolResultMessage
from moot.protocol.modes import ModeName
from moot.protocol.titles import TITLE_LENGTH
from moot.providers.base import LOG_KINDS, Provider, ResumesFromLog
from moot.providers.registry import UnknownModel, resolve_model
from moot.store.base import Store
from moot.store.errors import StoreError
from moot.tools.base import SideEffect, Tool, ToolContext, ToolResult, as_text

if TYPE_CHECKING:
    from moot.core.gate import TurnGate  # annotations only: gates are for library users
    from moot.core.titling import Titler  # annotations only: see `model_titles`
    from moot.hooks.runner import Hooks  # annotations only: no hooks set, no import


class RuntimeBusy(RuntimeError):
    """Work was started while other work runs: a slip of the runtime's own (`submit` answers a
    busy session with `op_refused` before it gets here)."""


PERSON = "user"
"""The agent name events and requests of the person's own tool calls carry."""
PERSON_MODE: ModeName = "bypassPermissions"
MANUAL_KEEP_TOKENS = 4_000
"""What `/compact` keeps verbatim of a conversation no context window bounds."""
"""The mode a person's own tool call is decided in: only deny rules speak (see `RunTool`)."""

Refusal = Callable[[str], "str | None"]
"""Given a path, why the person may not read it (a deny rule), or None."""


class AttachFiles(Protocol):
    """Reads the files a prompt names as `@path` (the session's workspace, its bounds and
    caps); `refused` says which a deny rule keeps from being read."""

    def __call__(self, prompt: str, refused: Refusal) -> Sequence[AttachedFile]: ...


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
        person_tools: Tools only the person runs (`RunTool`), besides the model's `tools`;
            never offered to a model.
        attach: Reads the files a turn's prompt names as `@path` into its `turn_started`;
            None attaches nothing.
        allow_background_agents: Agents may start background agents (`call_agent(...,
            background=true)`, `spawn_background_agent`); bounded by the run's budget and
            `Limits.max_background_agents`. Off by default.
        peer_messages: Offer `send_message` and `get_messages` even to a lone agent (someone
            listens: `on_message`); they are offered anyway with background agents or more
            than one agent (`core.peers.offers_messages`). The person can `SendMessage` to a
            running agent either way.
        person_replies: A front end can message running agents; False where none can
            (`moot -p`): an agent's `get_messages` then waits only while a peer or background
            agent could still send it something, never for the person.
        disabled_tools: Built-in peer tools not offered (`finish` cannot be disabled).
        pass_history: An agent called again by the same caller (in this run or a later one of
            the session) sees their earlier exchange first; off: each call starts afresh.
        extra_instructions: Added to the system prompt as ADDITIONAL INSTRUCTIONS, for the
            run's first call (`extra_scope="entry"`) or every call (`"all"`).
        model_titles: After the session's first turn, ask its first agent's model once for a
            title (`moot.core.titling`), recorded as `session_renamed`; off: no model call
            names a session.
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
        person_tools: Mapping[str, Tool] | None = None,
        attach: AttachFiles | None = None,
        allow_background_agents: bool = False,
        peer_messages: bool = False,
        person_replies: bool = True,
        disabled_tools: Sequence[str] = (),
        extra_instructions: str = "",
        extra_scope: str = "entry",
        pass_history: bool = False,
        model_titles: bool = False,
    ) -> None:
        if not agents:
            raise ValueError("a runtime needs at least one agent")
        if "finish" in disabled_tools:
            raise ValueError("finish cannot be disabled; give a tool named finish to replace it")
        if extra_scope not in ("entry", "all"):
            raise ValueError(f"extra_scope must be 'entry' or 'all', not {extra_scope!r}")
        self.allow_background_agents = allow_background_agents
        self.peer_messages = peer_messages
        self.person_replies = person_replies
        self.disabled_tools = frozenset(disabled_tools)
        self.extra_instructions, self.extra_scope = extra_instructions, extra_scope
        self.pass_history = pass_history
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
        # One runtime per session, in any process: claimed before the log is read, so what is
        # loaded stays the whole log (SessionBusy when another runtime holds it). Released at
        # Shutdown, once the run has recorded its end.
        self._claim = store.claim(session_id)
        try:
            self._session = load_session(store, session_id, self.limits)
        except BaseException:
            self._claim.release()
            raise
        if mode is not None and self._session.mode is None:
            self._session.mode = mode
        self._has_modes = mode is not None or self._session.mode is not None
        for name, model in self._session.models.items():
            # The model belongs to the session, as the mode does: the last switch wins.
            if name in self.agents and isinstance(self.agents[name].model, str):
                self.agents[name] = msgspec.structs.replace(self.agents[name], model=model)
        self.entry = self.agents[self.entry.name]
        self.person_tools: Mapping[str, Tool] = person_tools or {}
        if both := set(self.person_tools) & set(self.tools):
            raise ValueError(f"person tools named like the model's tools: {sorted(both)}")
        self.attach = attach
        self._tool_runs: set[asyncio.Task[None]] = set()
        self._tools_ran: set[str] = set()
        """Submissions whose `tool_ran` is recorded while their task is still ending."""
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
        self.listeners: list[Callable[[ev.Event], None]] = []
        """Called with each event as it is published, in the runtime's own step (the Python
        API's `on_message` answers an agent before its next step through this)."""
        self._task: asyncio.Task[None] | None = None
        self._run: RunContext | None = None
        self._submissions = 0
        self._titler: Titler | None = None
        if model_titles:
            from moot.core.titling import Titler  # lazy: only sessions with the setting ask

            entry = lambda: self.entry  # noqa: E731  # as it is when asked (a model switch)
            self._titler = Titler(store, session_id, entry, self._provider_for, self.record_session)
        self._shut_down = False
        self._stopped_by: str | None = None
        """The `Interrupt` that stopped a compaction, whose end answers it."""
        self._compacting = False
        """The task that runs is a compaction between turns, not a turn."""
        self.failure = ""
        """Why the last run (or compaction) raised instead of recording its end ("" when it
        did not): the store failed. Front ends read it when their stream ends early."""

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
        match op:
            case ops.UserTurn():
                self._start(self._turn(op, submission))
            case ops.ResumeRun():
                assert self._session.open_run is not None  # `refusal` said so
                self._start(self._resume(self._session.open_run, submission))
            case ops.Interrupt():
                if self._task is not None and self.running:
                    # Stopped after the work's first step, never before: work cancelled before
                    # it began would end without a word (no turn_started, nothing answering
                    # the turn or the interrupt).
                    loop = asyncio.get_running_loop()
                    loop.call_soon(self._stop_work, self._task, submission, not self._tool_runs)
                for task in self._tool_runs:
                    task.cancel()
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
            case ops.SetModel(model=model, agent=agent):
                self._set_model(model, agent, submission)
            case ops.RunTool(tool=name, arguments=arguments):
                self._run_tool(name, arguments, submission)
            case ops.Rename(title=title):
                self._rename(title, submission)
            case ops.Compact(focus=focus, agent=name):
                self._compact(focus, name, submission)
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
            case ops.SendMessage(to=to, text=text):
                self._person_message(to, text, submission)
            case ops.CancelAgent(task_id=task_id):
                self._cancel_agent(task_id, submission)
            case ops.Shutdown():
                self._shut_down = True
                if self.running:
                    assert self._task is not None
                    self._task.cancel()
                self._release_when_idle()
                for task in self._tool_runs:
                    task.cancel()
                self._end_streams()
        return submission

    def refusal(self, op: ops.Op) -> str:
        """Why the session cannot take `op` now ("" when it can, or when only carrying it out
        can tell): a turn while one runs, a resume with nothing to resume, an interrupt with
        nothing running. `submit` answers such an op with `op_refused` carrying this."""
        match op:
            case ops.UserTurn():
                return self.turn_refusal(op)
            case ops.ResumeRun():
                if busy := self._busy():
                    return busy
                if self._session.open_run is None:
                    return f"session {self.session_id} has no unfinished turn to resume"
            case ops.Interrupt() if not self.running and not self._tool_runs:
                return "nothing is running to interrupt"
        return ""

    def turn_refusal(self, op: ops.UserTurn) -> str:
        """Why `op` cannot start a turn now ("" when it can): one runs (busy comes first, as
        for any turn), its model cannot be used, it names an agent the session lacks, or the
        log holds a turn a crash left open."""
        if busy := self._busy():
            return busy
        if op.model is not None and (why := self.unusable_model(op.model)):
            return why
        if unknown := [
            a for a in (*op.agents, op.agent or self.entry.name) if a not in self.agents
        ]:
            return f"no agent {unknown[0]!r} in this run; agents: {', '.join(self.agents)}"
        if self._session.open_run is not None:
            # A new run cannot start while the log holds one a crash left open (the store
            # refuses its turn_started): the front end resumes that one first.
            return (
                "the last turn was interrupted (moot ended in the middle of it): resume it "
                "first (resume_run), then send this"
            )
        return ""

    def _busy(self) -> str:
        """Why a new turn must wait: a turn or a compaction runs ("" when neither does)."""
        if not self.running:
            return ""
        if self._compacting:
            return "the conversation is being compacted: wait for it, or interrupt it"
        return "a turn is running: wait for it to end, or interrupt it"

    def _stop_work(self, task: asyncio.Task[None], submission: str, alone: bool) -> None:
        """Cancel the turn or compaction an `Interrupt` stops; what that ends answers it. One
        that ended meanwhile leaves the interrupt nothing to do, which is its answer (unless
        the person's own tool calls it stopped are)."""
        if task is self._task and not task.done():
            if self._run is not None:
                self._run.submission_id = submission  # what the interrupt ends answers it
            self._stopped_by = submission  # a compaction's end answers it too
            task.cancel()
        elif alone and not self._shut_down:
            reason = "nothing is running to interrupt: it had ended"
            self._answer_later(
                ev.OpRefused(op="interrupt", reason=reason, submission_id=submission)
            )

    def _answer_later(self, event: ev.Event) -> None:
        """Record a session event from a loop callback, where an exception would only be
        logged: a store that cannot be written (a full disk) leaves the op unanswered, and
        `submit` says so for the next op."""
        with contextlib.suppress(StoreError):
            self.record_session(event)

    def _release_when_idle(self, _: object = None) -> None:
        """Let the claim go once neither the run nor a title request can record anything."""
        titling = self._titler.task if self._titler is not None else None
        busy = [t for t in (self._task, titling) if t is not None and not t.done()]
        if busy:
            busy[0].add_done_callback(self._release_when_idle)
        else:
            self._claim.release()

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

    def _person_message(self, to: str, text: str, submission: str) -> None:
        """The person is a peer: a message to a running agent, read at its next step."""
        run = self._run
        receiver = run.fold.live_call(to) if run is not None and self.running else None
        if run is None or receiver is None:
            running = ", ".join(run.fold.running_tasks()) if run is not None else ""
            self.record_session(
                ev.OpRefused(
                    op="send_message",
                    reason=f"no running agent {to!r}; running: {running or 'none'}",
                    submission_id=submission,
                )
            )
            return
        run.record_as(
            ev.MessageSent(
                agent=receiver.agent,
                call_id=receiver.call_id,
                parent_call_id=receiver.parent_call_id,
                sender=PERSON,
                to_call_id=receiver.call_id,
                to_agent=receiver.agent,
                text=text,
                submission_id=submission,
            )
        )

    def _cancel_agent(self, task_id: str, submission: str) -> None:
        """Cancel a running peer call (background or not): its drive records its subtree's end,
        then its own; its caller reads that it was cancelled and goes on."""
        run = self._run
        task = run.tasks.get(task_id) if run is not None else None
        if task is None or task.done():
            self.record_session(
                ev.OpRefused(
                    op="cancel_agent",
                    reason=f"no running peer call with task id {task_id!r}",
                    submission_id=submission,
                )
            )
            return
        # After the callee's first step, never before: a task cancelled before it began never
        # runs its drive, which records the end of the call and its subtree.
        asyncio.get_running_loop().call_soon(self._cancel_callee, task, task_id, submission)

    def _cancel_callee(self, task: asyncio.Task[object], task_id: str, submission: str) -> None:
        if not task.done():
            task.cancel()
        elif not self._shut_down:  # it ended in its first step: nothing was left to cancel
            reason = f"peer call {task_id!r} had ended before it could be cancelled"
            self._answer_later(
                ev.OpRefused(op="cancel_agent", reason=reason, submission_id=submission)
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

    def _set_model(self, model: str, name: str | None, submission: str) -> None:
        def refuse(reason: str) -> None:
            self.record_session(
                ev.OpRefused(op="set_model", reason=reason, submission_id=submission)
            )

        agent = self.agents.get(name) if name else self.entry
        model = model.strip()
        if agent is None:
            refuse(f"no agent {name!r}; agents: {', '.join(self.agents)}")
            return
        if self.running:
            refuse("a turn is running: switch the model when it has ended (or interrupt it)")
            return
        previous = agent.model if isinstance(agent.model, str) else agent.model.name
        if model == previous:
            return
        try:
            # Resolved only to check it (a bad name, a missing key); the turn that needs the
            # provider makes it, so that a scripted one is moved past turns already played.
            self._resolve(model)
        except UnknownModel as exc:
            refuse(str(exc))
            return
        self.record_session(
            ev.ModelChanged(
                agent=agent.name, model=model, previous=previous, submission_id=submission
            )
        )

    def _rename(self, title: str, submission: str) -> None:
        title = " ".join(title.split())[:TITLE_LENGTH]
        if not title:
            reason = "a title needs a word: /rename TITLE"
            self.record_session(ev.OpRefused(op="rename", reason=reason, submission_id=submission))
            return
        info = self.store.session(self.session_id)
        previous = info.title if info is not None else ""
        self.record_session(
            ev.SessionRenamed(title=title, previous=previous, submission_id=submission)
        )

    def unusable_model(self, model: str) -> str:
        """Why `model` cannot answer a turn ("" when it can): a bad name, a missing key."""
        try:
            self._resolve(model)
        except UnknownModel as exc:
            return str(exc)
        return ""

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
        self._publish(event)
        return event

    # ---- compaction between runs -----------------------------------------------------------

    def _compact(self, focus: str, name: str | None, submission: str) -> None:
        agent = self.agents.get(name) if name else self.entry
        why = ""
        if agent is None:
            why = f"no agent {name!r}; agents: {', '.join(self.agents)}"
        elif self.running or self._session.open_run is not None:
            why = "a turn is running or unfinished: compact when it has ended"
        elif not self._session.history.get(agent.name):
            why = "nothing to compact yet"
        if why:
            self.record_session(ev.OpRefused(op="compact", reason=why, submission_id=submission))
            return
        assert agent is not None
        self._start(self._compact_history(agent, focus, submission), compacting=True)

    async def _compact_history(self, agent: Agent, focus: str, submission: str) -> None:
        """Summarise the agent's older conversation (the model's summary, or the fallback)
        and record it as `history_compacted`, which the session folds in."""
        from moot.core.compact import KEEP_SHARE, compact, last_turn_cut
        from moot.providers.base import model_info

        try:
            provider = self._provider_for(agent)
            if self.hooks is not None:
                base = {"session_id": self.session_id, "permission_mode": self.mode or "default"}
                await self.hooks.run_pre_compact(base, trigger="manual", custom_instructions=focus)
            info = model_info(provider)
            window = info.context_window if info is not None else None
            budget = int(window * (self.limits.compact_at or 0.8)) if window else None
            messages = self._session.history.get(agent.name, [])
            keep = int(budget * KEEP_SHARE) if budget else MANUAL_KEEP_TOKENS
            plan = await compact(
                messages,
                provider=provider,
                budget=budget,
                keep_tokens=keep,
                focus=focus,
                agent=agent.name,
                window=window,
                cut=last_turn_cut(messages, keep),
            )
        except asyncio.CancelledError:
            # An `Interrupt` (or the session's end) stopped it: nothing was compacted, and
            # that is the answer the interrupt gets.
            reason = "interrupted: nothing was compacted"
            answers = self._stopped_by or submission
            self.record_session(ev.OpRefused(op="compact", reason=reason, submission_id=answers))
            raise
        except Exception as exc:  # a provider that cannot be made, a hook that failed to start
            reason = f"compaction failed: {type(exc).__name__}: {exc}"
            self.record_session(ev.OpRefused(op="compact", reason=reason, submission_id=submission))
            return
        reason = ""
        if not (plan.replaced or plan.elided):
            reason = "nothing to compact yet: the conversation is all recent"
        elif plan.tokens_after >= plan.tokens_before:
            # A short conversation summarised under four headings can come out longer: such a
            # compaction would only cost context, so it is not recorded.
            reason = (
                f"the summary would not shrink the conversation (about {plan.tokens_before:,} → "
                f"{plan.tokens_after:,} tokens): nothing was compacted"
            )
        if reason:
            self.record_session(ev.OpRefused(op="compact", reason=reason, submission_id=submission))
            return
        self.record_session(
            ev.HistoryCompacted(
                agent=agent.name,
                trigger="manual",
                focus=focus,
                submission_id=submission,
                **msgspec.structs.asdict(plan),
            )
        )

    # ---- the person's own tool calls ----------------------------------------------------------

    def person_refusal(self, tool: str, side_effect: SideEffect, arguments: dict[str, Any]) -> str:
        """Why a deny rule forbids the person this call ("" when none does).

        The person's calls pass the one decision in `bypassPermissions` mode: they typed the
        call, so no question is asked (they would be the one asked), but a deny rule holds for
        them as for any model, and with it the files it hides.
        """
        request = ApprovalRequest(
            session_id=self.session_id,
            agent=PERSON,
            call_id="",
            tool_call_id="",
            tool=tool,
            side_effect=side_effect,
            arguments=arguments,
            mode=PERSON_MODE,
        )
        verdict = self.approval.decide(request)
        if verdict.decision == "deny" and not verdict.unasked:
            return verdict.reason or "refused by the permission rules"
        return ""

    def _run_tool(self, name: str, arguments: dict[str, Any], submission: str) -> None:
        tool = self.tools.get(name) or self.person_tools.get(name)
        if tool is None:
            every = ", ".join(sorted([*self.tools, *self.person_tools]))
            reason = f"no tool {name!r} in this session; tools: {every}"
        else:
            reason = self.person_refusal(name, tool.side_effect, arguments)
        if reason:
            self.record_session(
                ev.OpRefused(op="run_tool", reason=reason, submission_id=submission)
            )
            return
        assert tool is not None
        started = time.perf_counter()
        task = asyncio.get_running_loop().create_task(
            self._tool_run(tool, arguments, submission, started), name=f"moot-tool-{name}"
        )
        self._tool_runs.add(task)

        def ended(task: asyncio.Task[None]) -> None:
            self._tool_runs.discard(task)
            if task.cancelled() and submission not in self._tools_ran:
                # Cancelled before it began: it never reached its own `tool_ran`.
                self._tool_ran(name, arguments, submission, started, None)
            self._tools_ran.discard(submission)

        task.add_done_callback(ended)

    async def _tool_run(
        self, tool: Tool, arguments: dict[str, Any], submission: str, started: float
    ) -> None:
        ctx = ToolContext(
            session_id=self.session_id,
            run_id="",  # no run: nothing is snapshotted for a rewind, nothing is folded
            call_id="",
            agent=PERSON,
            tool_call_id=new_id("person"),
            mode=self.mode,
        )
        try:
            result = await tool.invoke(dict(arguments), ctx)
        except asyncio.CancelledError:
            self._tool_ran(tool.name, arguments, submission, started, None)
            raise
        self._tool_ran(tool.name, arguments, submission, started, result)

    def _tool_ran(
        self,
        name: str,
        arguments: dict[str, Any],
        submission: str,
        started: float,
        result: ToolResult | None,
    ) -> None:
        self._tools_ran.add(submission)
        stopped = result is None
        result = result or ToolResult.error("Interrupted before it finished.")
        self.record_session(
            ev.ToolRan(
                tool=name,
                arguments=arguments,
                content=as_text(result.content),
                is_error=result.is_error,
                duration_ms=(time.perf_counter() - started) * 1000,
                interrupted=stopped,
                display=dict(result.display),
                submission_id=submission,
            )
        )

    async def tools_done(self) -> None:
        """Wait until the person's tool calls have ended (after `Shutdown`, their `tool_ran`)."""
        while self._tool_runs:
            await asyncio.gather(*self._tool_runs, return_exceptions=True)

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
        from moot.core.peers import agent_tools, offered_specs, offers_messages, system_prompt
        from moot.providers.base import ModelRequest, estimate_tokens

        chosen = self.agents[agent] if agent else self.entry
        roster = list(self.agents.values())
        talks = offers_messages(
            len(self.agents), background=self.allow_background_agents, messages=self.peer_messages
        )
        specs = offered_specs(
            chosen,
            agent_tools(chosen, self.tools),
            roster,
            background=self.allow_background_agents,
            talks=talks,
            disabled=self.disabled_tools,
        )
        messages = self._session.history.get(chosen.name, [])

        def tokens(**request: Any) -> int:
            return estimate_tokens(
                ModelRequest(model="", **{"system": "", "messages": (), **request})
            )

        results = sum(isinstance(m, ToolResultMessage) for m in messages)
        return [
            ContextPart(
                "system prompt",
                tokens(system=system_prompt(chosen, roster, PERSON, talks=talks)),
                "instructions and the peers",
            ),
            ContextPart("tools", tokens(tools=specs), f"{len(specs)} tool schemas"),
            ContextPart(
                "messages",
                tokens(messages=messages),
                f"{len(messages)} messages, {results} tool results",
            ),
        ]

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

    def _start(self, work: object, *, compacting: bool = False) -> None:
        if self.running:
            work.close()  # type: ignore[attr-defined]
            raise RuntimeBusy(f"session {self.session_id} is already running a turn")
        self._stopped_by, self._compacting = None, compacting
        self.failure = ""
        self._task = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
        self._task.add_done_callback(self._after_run)

    def _after_run(self, task: asyncio.Task[None]) -> None:
        # A run that raised could not record its end (the store failed: a full disk, a
        # damaged file): no turn_finished will come, so nobody may wait for one. The streams
        # end, `failure` says why, and `wait()` raises what the run raised.
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.failure = str(exc) or type(exc).__name__
            self._end_streams()

    def _end_streams(self) -> None:
        for subscription in self._subscribers:
            subscription.end()
        self._subscribers.clear()

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
            settings=RunSettings(
                gate=self.gate,
                hooks=self.hooks,
                turn_end=self.turn_end,
                allow_background_agents=self.allow_background_agents,
                peer_messages=self.peer_messages,
                person_replies=self.person_replies,
                disabled_tools=self.disabled_tools,
                extra_instructions=self.extra_instructions,
                extra_scope=self.extra_scope,
                pass_history=self.pass_history,
            ),
            submission_id=submission,
            session_start=session_start,
        )
        return self._run

    async def _turn(self, op: ops.UserTurn, submission: str) -> None:
        starting = tuple(op.agents)
        if len(starting) == 1:
            op = msgspec.structs.replace(op, agent=starting[0], agents=())
            starting = ()
        agent = self.agents[op.agent] if op.agent else self.entry
        files: Sequence[AttachedFile] = ()
        if self.attach is not None and "@" in op.text:
            files = self.attach(
                op.text,
                lambda path: self.person_refusal("read", SideEffect.READ_ONLY, {"path": path}),
            )
        fold = RunFold(self.limits, self._session.history)
        self._session.open_run = fold
        run = self._context(fold, submission)
        run_id = new_id("run")
        run.record_as(
            ev.TurnStarted(
                agent=PERSON if starting else agent.name,
                starting_agents=starting,
                call_id=run_id,
                parent_call_id=None,
                prompt=op.text,
                attachments=op.attachments,
                files=tuple(files),
                limits=self.limits.as_dict(),
                mode=run.mode(),
                model=op.model or "",
                pool=tuple(self.agents),
            ),
        )
        await self._drive(run)

    async def _resume(self, fold: RunFold, submission: str) -> None:
        """Continue an unfinished run; tools that started without a result are not re-run."""
        run = self._context(fold, submission)
        # A peer call that was running is not a side effect of its own: the callee's call
        # resumes instead (see PeerCalls.call_peer). Every other running tool is interrupted.
        interrupted = [
            (call, tc)
            for call in fold.calls.values()
            if not call.state.terminal
            for tc in call.running_tools
            if tc.name not in PEER_CALLS
        ]
        root = fold.calls[fold.run_id]
        run.record(
            root, ev.RunResumed(interrupted_tool_calls=tuple(tc.id for _, tc in interrupted))
        )
        for call, tc in interrupted:
            run.record_interrupted(call, tc)
        for orphan in _orphans(fold):
            # Left open by a moot that ended while closing it (an older moot could): nothing
            # will drive it again, so it ends now, subtree first, before the run goes on.
            if orphan.stop_reason is None:
                end_undriven(run, orphan)
        await self._drive(run)

    async def _drive(self, run: RunContext) -> None:
        fold = run.fold
        try:
            await CallRunner(run, fold.calls[fold.run_id]).drive()
        finally:
            for task in list(run.tasks.values()):  # none, unless the store failed mid-run
                task.cancel()
            self._run = None
            self._last_finished = fold.finished
            if fold.finished is not None:
                self._session.finish_run(fold)
                self.store.save_checkpoint(
                    self.session_id, CHECKPOINT, fold.finished.seq, self._session.checkpoint()
                )
                if self._titler is not None and not self._shut_down:
                    self._titler.consider(fold.finished)

    async def title_written(self, timeout: float) -> None:
        """Wait for a title request under way (`model_titles`) to record its answer, at most
        `timeout` seconds; one that takes longer is cancelled."""
        if self._titler is not None:
            await self._titler.written(timeout)

    def _provider_for(self, agent: Agent) -> Provider:
        """The agent's provider, made once per model (and told the calls already made to it,
        when its answers depend on them)."""
        model = agent.model
        if not model:
            raise ValueError(f"agent {agent.name!r} has no model")
        key = model if isinstance(model, str) else id(model)
        provider = self._providers.get(key)
        if provider is None:
            provider = self._resolve(model) if isinstance(model, str) else model
            self._providers[key] = provider
            if isinstance(provider, ResumesFromLog):
                log = self.store.events(self.session_id, kinds=LOG_KINDS)
                if not isinstance(model, str):
                    # Provider objects may share a name (every `ScriptedProvider` is
                    # "scripted"): each is told only the calls of the agents it answers.
                    users = {a.name for a in self.agents.values() if a.model is model}
                    log = [e for e in log if e.agent in users]
                provider.resume(log)
        return provider

    def _publish(self, event: ev.Event) -> None:
        for subscription in self._subscribers:
            subscription.put(event)
        # After every subscriber has it: an event a listener causes comes after it everywhere.
        for listener in self.listeners:
            listener(event)

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)


def _orphans(fold: RunFold) -> list[CallState]:
    """The open calls of an unfinished run that nothing would drive on a resume: their caller
    has ended, or has gone on from the `call_agent` that made them (its result is recorded),
    and they are not a background agent of an open caller (those are started again)."""
    calls = fold.calls
    found = []
    for call in calls.values():
        parent = calls.get(call.parent_call_id or "")
        if call.stop_reason is not None or parent is None:
            continue
        waited_for = {tc.id for tc in parent.running_tools}
        gone_on = not call.background and call.tool_call_id not in waited_for
        if parent.stop_reason is not None or gone_on:
            found.append(call)
    return found
