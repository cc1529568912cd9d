"""The rules of a session's event log, checked before each event is appended.

A session holds runs (one per turn of the person); inside a run, agents call each other, and
each call has its own run-state machine (`moot.protocol.states`). The rules:

a. Calls exist before they are used. A run's first event is its creation, `turn_started`, with
   `call_id == run_id` and no parent. Every other event belongs to a call already created in
   that run. `agent_called` creates a call: its `call_id` is new and its parent is an open call
   of the same run, one level up (`depth == parent depth + 1`, the root call being depth 0).
b. Nothing after the end. At most one run of a session is open at a time. A call takes no event
   after its terminal event, and a run none after its `turn_finished`. `turn_finished` ends the
   run's root call and needs every other call of the run to have ended; `agent_returned` ends a
   call that is not the root, and needs every call it made to have ended (a subtree ends
   innermost first).
c. Legal state transitions only. `state_changed.from_state` is the call's current state (a new
   call is `created`) and the move is legal; no `state_changed` enters a terminal state, since
   only terminal events end a call. A terminal event moves its call from the current state to
   `event.state` along a legal transition, with a stop reason that agrees with that state.
d. One result per started tool. `tool_finished` answers an earlier `tool_started` with the same
   `tool_call_id` in the same call, at most once; a `tool_call_id` starts at most once per call.
e. Session events stand outside runs. An event of a session kind (`SESSION_KINDS`: a mode or
   model switch, a rename, the start of a sitting `session_resumed`, ...) has no `run_id` or
   `call_id` and may come at any time, between runs or during one; every other event belongs
   to a run.
f. Events fit their schema. Every field holds a value of its declared type, so that the log
   reads back (events are not type-checked when they are built; see `check_schema`).

`SessionLog` checks them incrementally: it keeps a little state per call of the open run (its
run state, depth, and tool call ids) and only the ids of finished runs, so a check costs the
same at the first event and at the millionth, and nothing is ever re-read.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from moot.protocol.events import (
    SESSION_KINDS,
    AgentCalled,
    AgentReturned,
    Event,
    EventT,
    StateChanged,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
    checked_json,
)
from moot.protocol.states import RunState, TransitionError, check_terminal, check_transition

RULES = {
    "a": "calls exist before they are used",
    "b": "nothing after the end",
    "c": "legal state transitions only",
    "d": "one result per started tool",
    "e": "session events stand outside runs",
    "f": "events fit their schema",
}
"""The rules by letter, as the module docstring states them."""


class EventInvariantError(ValueError):
    """An event that would break a rule of the log; the store appended nothing."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(f"rule {rule} ({RULES[rule]}): {detail}")
        self.rule = rule
        """The letter of the broken rule, a key of `RULES`."""
        self.detail = detail


def check_schema(event: EventT) -> tuple[str, EventT]:
    """Rule f: `event`'s JSON form and the event read back from it (see `checked_json`).

    The stores call it on append and keep what it read back (replaying stored events needs
    no second check).

    Raises:
        EventInvariantError: a field holds a value of another type than its schema says.
    """
    try:
        return checked_json(event)
    except ValueError as exc:
        raise EventInvariantError("f", str(exc)) from None


class _Call(msgspec.Struct):
    parent: str | None
    depth: int
    state: RunState = RunState.CREATED
    running_tools: set[str] = msgspec.field(default_factory=set)
    """Tool call ids started without a result yet."""
    finished_tools: set[str] = msgspec.field(default_factory=set)
    open_callees: int = 0
    """Calls this call made that have not ended; its `agent_returned` needs none."""


class _Run(msgspec.Struct):
    run_id: str
    calls: dict[str, _Call]
    open_callees: int = 0
    """Calls other than the root that have not ended; `turn_finished` needs none."""


class SessionLog:
    """The state of one session's log that the rules need; checks events before they land.

    Stores call `check(event)`, persist the event, then `record(event)`; `append` does both
    for logs kept only in memory.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._next_seq = 1
        self._run: _Run | None = None
        self._finished_runs: set[str] = set()
        self._replaying = False

    @classmethod
    def replay(
        cls,
        session_id: str,
        events: Iterable[Event],
        *,
        finished_runs: Iterable[str] = (),
        last_seq: int = 0,
    ) -> SessionLog:
        """Rebuild the state from a session's stored events, checking each one again.

        Args:
            session_id: The session the events belong to.
            events: Stored events in seq order: all of the session's, or only the open run's
                when `finished_runs` names the runs that finished before it.
            finished_runs: Ids of finished runs whose events are not replayed.
            last_seq: The session's highest seq, when `events` does not end with it.

        Returns:
            A log ready to check the session's next event.

        Raises:
            EventInvariantError: A stored event breaks a rule.
            ValueError: The events are not in seq order.
        """
        log = cls(session_id)
        log._finished_runs.update(finished_runs)
        # A log an older moot wrote may hold a call that ended before a call it made (it could
        # leave such a callee open): it still loads, and a resume ends that callee.
        log._replaying = True
        for event in events:
            if event.seq < log._next_seq:
                raise ValueError(
                    f"replay of session {session_id}: seq {event.seq} after {log._next_seq - 1}"
                )
            log._next_seq = event.seq
            log.append(event)
        log._next_seq = max(log._next_seq, last_seq + 1)
        log._replaying = False
        return log

    # ---- queries ----------------------------------------------------------------------------

    @property
    def next_seq(self) -> int:
        """The seq the next appended event gets."""
        return self._next_seq

    @property
    def open_run_id(self) -> str | None:
        """The run that has started and not finished, if any."""
        return self._run.run_id if self._run else None

    def is_finished(self, run_id: str) -> bool:
        return run_id in self._finished_runs

    def state_of(self, call_id: str) -> RunState:
        """The current run state of a call of the open run.

        Raises:
            KeyError: The call is not part of the open run (finished runs are not tracked).
        """
        return self._open_call(call_id).state

    def depth_of(self, call_id: str) -> int:
        """How deep a call of the open run is: 0 for the root, 1 for its callees, ..."""
        return self._open_call(call_id).depth

    def running_tools(self, call_id: str) -> frozenset[str]:
        """Tool call ids of a call of the open run that started and have no result yet."""
        return frozenset(self._open_call(call_id).running_tools)

    def open_calls(self) -> list[str]:
        """The calls of the open run that have not ended, the root first."""
        if self._run is None:
            return []
        return [cid for cid, call in self._run.calls.items() if not call.state.terminal]

    def _open_call(self, call_id: str) -> _Call:
        if self._run is None or call_id not in self._run.calls:
            raise KeyError(f"call {call_id} is not part of the open run of {self.session_id}")
        return self._run.calls[call_id]

    # ---- checking and recording ---------------------------------------------------------------

    def append(self, event: Event) -> None:
        """Check an event and record it."""
        self.check(event)
        self.record(event)

    def check(self, event: Event) -> None:
        """Raise `EventInvariantError` if appending `event` next would break a rule.

        Changes nothing; the event's own `seq` is ignored (the store assigns it).
        """
        if event.session_id != self.session_id:
            raise ValueError(
                f"{event.kind} of session {event.session_id!r} checked against the log of "
                f"session {self.session_id!r}"
            )
        kind, run_id, call_id = event.kind, event.run_id, event.call_id
        if kind in SESSION_KINDS:
            if run_id or call_id:
                raise EventInvariantError("e", f"{kind} is a session event, yet names a run")
            return
        if not run_id or not call_id:
            raise EventInvariantError("a", f"{kind} has no run_id or call_id")
        if run_id in self._finished_runs:
            raise EventInvariantError("b", f"{kind} for run {run_id} after its turn_finished")
        if isinstance(event, TurnStarted):
            self._check_turn_started(event)
            return
        run = self._run
        if run is None or run.run_id != run_id:
            raise EventInvariantError(
                "a", f"{kind} for run {run_id}, which has not started with turn_started"
            )
        if isinstance(event, AgentCalled):
            self._check_agent_called(run, event)
            return
        call = run.calls.get(call_id)
        if call is None:
            raise EventInvariantError(
                "a", f"{kind} for call {call_id}, which was not created in run {run_id}"
            )
        if call.state.terminal:
            raise EventInvariantError(
                "b", f"{kind} for call {call_id} of run {run_id} after its terminal event"
            )
        match event:
            case StateChanged():
                self._check_state_changed(call, event)
            case TurnFinished() | AgentReturned():
                self._check_terminal_event(run, call, event)
            case ToolStarted():
                tool_call_id = event.tool_call_id
                if tool_call_id in call.running_tools or tool_call_id in call.finished_tools:
                    raise EventInvariantError(
                        "d", f"tool call {tool_call_id} started twice in call {call_id}"
                    )
            case ToolFinished():
                if event.tool_call_id in call.finished_tools:
                    raise EventInvariantError(
                        "d", f"second result for tool call {event.tool_call_id} in call {call_id}"
                    )
                if event.tool_call_id not in call.running_tools:
                    raise EventInvariantError(
                        "d",
                        f"result for tool call {event.tool_call_id}, which never started in "
                        f"call {call_id}",
                    )

    def record(self, event: Event) -> None:
        """Update the state for an event that passed `check` and was persisted."""
        self._next_seq += 1
        if event.kind in SESSION_KINDS:
            return
        if isinstance(event, TurnStarted):
            root = _Call(parent=None, depth=0)
            self._run = _Run(event.run_id, {event.call_id: root})
            return
        run = self._run
        assert run is not None, "record() of an event that did not pass check()"
        if isinstance(event, AgentCalled):
            run.calls[event.call_id] = _Call(parent=event.parent_call_id, depth=event.depth)
            run.open_callees += 1
            if event.parent_call_id in run.calls:
                run.calls[event.parent_call_id].open_callees += 1
            return
        call = run.calls[event.call_id]
        match event:
            case StateChanged():
                call.state = event.to_state
            case AgentReturned():
                call.state = event.state
                call.running_tools.clear()
                call.finished_tools.clear()
                run.open_callees -= 1
                if call.parent in run.calls:
                    run.calls[call.parent].open_callees -= 1
            case TurnFinished():
                # The run's per-call state is dropped; only its id is kept, to refuse late events.
                self._finished_runs.add(run.run_id)
                self._run = None
            case ToolStarted():
                call.running_tools.add(event.tool_call_id)
            case ToolFinished():
                call.running_tools.discard(event.tool_call_id)
                call.finished_tools.add(event.tool_call_id)

    def _check_turn_started(self, event: TurnStarted) -> None:
        if self._run is not None:
            raise EventInvariantError(
                "b", f"turn_started for run {event.run_id} while run {self._run.run_id} is open"
            )
        if event.call_id != event.run_id or event.parent_call_id is not None:
            raise EventInvariantError(
                "a",
                f"turn_started for run {event.run_id} must have call_id == run_id and no "
                f"parent, got call_id {event.call_id} and parent {event.parent_call_id}",
            )

    def _check_agent_called(self, run: _Run, event: AgentCalled) -> None:
        if event.call_id in run.calls:
            raise EventInvariantError(
                "a", f"agent_called reuses call id {event.call_id} in run {run.run_id}"
            )
        parent_id = event.parent_call_id
        parent = run.calls.get(parent_id) if parent_id else None
        if parent is None or parent.state.terminal:
            raise EventInvariantError(
                "a",
                f"agent_called for call {event.call_id}: parent {parent_id} is not an open call "
                f"of run {run.run_id}",
            )
        if event.depth != parent.depth + 1:
            raise EventInvariantError(
                "a",
                f"agent_called for call {event.call_id} has depth {event.depth}; its parent "
                f"{parent_id} is at depth {parent.depth}",
            )

    def _check_state_changed(self, call: _Call, event: StateChanged) -> None:
        where = f"call {event.call_id} of run {event.run_id}"
        if event.from_state != call.state:
            raise EventInvariantError(
                "c", f"state_changed from {event.from_state}, but {where} is in {call.state}"
            )
        if event.to_state.terminal:
            raise EventInvariantError(
                "c",
                f"state_changed into terminal state {event.to_state} for {where}; only "
                f"turn_finished or agent_returned end a call",
            )
        try:
            check_transition(call.state, event.to_state)
        except TransitionError as e:
            raise EventInvariantError("c", f"{e} for {where}") from e

    def _check_terminal_event(
        self, run: _Run, call: _Call, event: TurnFinished | AgentReturned
    ) -> None:
        if isinstance(event, TurnFinished):
            if event.call_id != run.run_id:
                raise EventInvariantError(
                    "b",
                    f"turn_finished for call {event.call_id}, not the root call of run "
                    f"{run.run_id} (other calls end with agent_returned)",
                )
            if run.open_callees:
                open_ids = ", ".join(c for c in self.open_calls() if c != run.run_id)
                raise EventInvariantError(
                    "b", f"turn_finished for run {run.run_id} while calls are open: {open_ids}"
                )
        elif event.call_id == run.run_id:
            raise EventInvariantError(
                "b", f"agent_returned for the root call of run {run.run_id}; it needs turn_finished"
            )
        elif call.open_callees and not self._replaying:
            open_ids = ", ".join(
                c for c in self.open_calls() if run.calls[c].parent == event.call_id
            )
            raise EventInvariantError(
                "b",
                f"agent_returned for call {event.call_id} of run {run.run_id} while calls it "
                f"made are open: {open_ids}",
            )
        where = f"{event.kind} of call {event.call_id} in run {run.run_id}"
        try:
            check_transition(call.state, event.state)
            check_terminal(event.state, event.stop_reason)
        except TransitionError as e:
            raise EventInvariantError("c", f"{e} for {where}") from e
