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
