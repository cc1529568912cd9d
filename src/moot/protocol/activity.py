"""What an agent call is doing now, read from its events alone: running, waiting for
approval, waiting for a message, or how it ended.

One rule for every view of a live call tree (the app's trace pane, `format_trace`,
`get_agent_status`), so that they agree, live, after the fact and after a resume.
"""

from __future__ import annotations

from moot.protocol import events as ev

RUNNING = "running"
WAITING_FOR_APPROVAL = "waiting for approval"
WAITING_FOR_MESSAGE = "waiting for a message"

_PASSING = (ev.TextDelta, ev.ThinkingDelta, ev.StateChanged)
"""Events that say nothing about waiting (the app's trace pane never sees them)."""


class CallActivity:
    """One call's activity, from the events recorded in it (`event.call_id` is the call's).

    A call waits for approval while some `approval_requested` of it has no
    `approval_decided`. It waits for a message from its `waiting_for_message` until the
    waiting `get_messages` finishes (other tools of the same step may finish meanwhile), or,
    for an answer held back, until its next event other than a delta or a state change (the
    delivery that wakes it). It is done at its `agent_returned` or `turn_finished`.
    """

    __slots__ = ("_tool", "approvals", "ended", "messages")

    def __init__(self) -> None:
        self.approvals = 0
        """Approvals asked and not yet decided."""
        self.messages = False
        """Waiting for a message or a background agent's return."""
        self.ended: ev.AgentReturned | ev.TurnFinished | None = None
        self._tool: str | None = None
        """The `get_messages` tool call that waits (None: the answer waits)."""

    def apply(self, event: ev.Event) -> None:
        """Take the call's next event (the caller routes each event to its call)."""
        if isinstance(event, _PASSING):
            return
        if isinstance(event, ev.WaitingForMessage):
            self.messages, self._tool = True, event.tool_call_id
        elif self._tool is None or (
            isinstance(event, ev.ToolFinished) and event.tool_call_id == self._tool
        ):
            self.messages, self._tool = False, None
        if isinstance(event, ev.ApprovalRequested):
            self.approvals += 1
        elif isinstance(event, ev.ApprovalDecided):
            self.approvals = max(0, self.approvals - 1)
        elif isinstance(event, ev.AgentReturned | ev.TurnFinished):
            self.ended, self.approvals, self.messages = event, 0, False

    @property
    def state(self) -> str:
        """`running`, `waiting for approval`, `waiting for a message`, or, once the call
        ended, its run state (`completed`, `cancelled`, ...)."""
        if self.ended is not None:
            return str(self.ended.state)
        if self.approvals:
            return WAITING_FOR_APPROVAL
        return WAITING_FOR_MESSAGE if self.messages else RUNNING

    @property
    def waiting(self) -> bool:
        return self.ended is None and (self.approvals > 0 or self.messages)


WAITING_FOR_MODEL = "waiting for the model"
THINKING = "thinking"
WRITING = "writing"
WAITING_FOR_YOU = "waiting for your approval"
CHARS_PER_TOKEN = 4
"""What a streamed token is taken to be until the call's usage says (a rough count, shown as
`~`)."""


class TurnProgress:
    """What the person's turn is doing now, since when, and the tokens so far: one rule for
    the app's working line and status line and the REPL's toolbar.

    The phase is the latest activity of any call of the turn (a peer's tool runs under its
    caller's `call_agent`): waiting for the model, thinking, writing, running a tool, calling
    an agent, waiting for the person's approval or for a message. Times come from the caller's
    clock (`now`), so a test drives them.
    """

    __slots__ = ("_approvals", "_streamed", "phase", "since", "started", "tokens")

    def __init__(self) -> None:
        self.phase: str | None = None
        """None: no turn runs."""
        self.since = 0.0
        """When the phase began."""
        self.started = 0.0
        """When the turn began."""
        self.tokens = 0
        """Output tokens the turn's model calls reported so far."""
        self._streamed = 0
        """Characters streamed since the last usage report (counted as ~tokens meanwhile)."""
        self._approvals = 0

    def apply(self, event: ev.Event, now: float) -> bool:
        """Take an event of the session; True when the phase changed."""
        before = self.phase
        match event:
            case ev.TurnStarted() | ev.RunResumed():
                self.phase, self.since, self.started = WAITING_FOR_MODEL, now, now
                self.tokens, self._streamed, self._approvals = 0, 0, 0
            case ev.TurnFinished():
                self.phase = None
            case _ if self.phase is None:
                return False
            case ev.StateChanged(to_state="model_pending"):
                self._set(WAITING_FOR_MODEL, now)
            case ev.TextDelta() | ev.ThinkingDelta():
                self.streamed(isinstance(event, ev.ThinkingDelta), len(event.text), now)
            case ev.UsageRecorded():
                self.tokens += event.usage.output_tokens
                self._streamed = 0
            case ev.ToolStarted():
                self._set(f"running {event.tool}", now)
            case ev.AgentCalled():
                self._set(f"{event.caller} called {event.agent}", now)
            case ev.ApprovalRequested():
                self._approvals += 1
                self._set(WAITING_FOR_YOU, now)
            case ev.ApprovalDecided():
                self._approvals = max(0, self._approvals - 1)
            case ev.WaitingForMessage():
                self._set(WAITING_FOR_MESSAGE, now)
        return self.phase != before

    def streamed(self, thinking: bool, chars: int, now: float) -> bool:
        """Text or thinking streamed in (the app takes deltas in batches); True when the
        phase changed."""
        if self.phase is None:
            return False
        before = self.phase
        self._streamed += chars
        self._set(THINKING if thinking else WRITING, now)
        return self.phase != before

    def _set(self, phase: str, now: float) -> None:
        if self._approvals and phase != WAITING_FOR_YOU:
            return  # a question the person has not answered outranks what else goes on
        if phase != self.phase:
            self.phase, self.since = phase, now

    @property
    def shown_tokens(self) -> str:
        """`1,240 tok`, or `~1,300 tok` while part of it is only streamed so far."""
        streamed = self._streamed // CHARS_PER_TOKEN
        return f"{'~' if streamed else ''}{self.tokens + streamed:,} tok"

    def line(self, now: float, *, tokens: bool = True) -> str:
        """`thinking 3s · turn 14s · ~1,240 tok` (without the tokens when not `tokens`); empty
        when no turn runs."""
        if self.phase is None:
            return ""
        phase, turn = seconds(now - self.since), seconds(now - self.started)
        parts = [f"{self.phase} {phase}"]
        if turn != phase:
            parts.append(f"turn {turn}")
        if tokens and (self.tokens or self._streamed):
            parts.append(self.shown_tokens)
        return " · ".join(parts)


def seconds(elapsed: float) -> str:
    """`4s`, `1m 05s`: whole seconds, as a person reads a wait."""
    whole = max(0, int(elapsed))
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"
