"""`drive_turn`: one turn through a client, to its end, answering what asks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import msgspec

from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Attachment
from moot.protocol.subscription import Subscription

Answer = Callable[[ev.ApprovalRequested], ops.Op | None]
React = Callable[[ev.Event], ops.Op | None]


class Drivable(Protocol):
    """What `drive_turn` needs of a client: a `Client`, a `FakeClient` or a bare `Runtime`."""

    def submit(self, op: ops.Op) -> str: ...

    def subscribe(self, after_seq: int | None = None) -> Subscription: ...


class TurnOutcome(msgspec.Struct, frozen=True):
    """How a driven turn ended, and every event the client published while it ran."""

    finished: ev.TurnFinished
    events: list[ev.Event]
    submission_id: str
    """The turn's submission id (its events carry it)."""

    def of(self, event_type: type[ev.EventT]) -> list[ev.EventT]:
        """The events of one type, in order."""
        return [e for e in self.events if isinstance(e, event_type)]


async def drive_turn(
    client: Drivable,
    text: str = "go",
    *,
    answer: Answer | None = None,
    react: React | None = None,
    agent: str | None = None,
    attachments: Sequence[Attachment] = (),
    resume: bool = False,
    agents: Sequence[str] = (),
) -> TurnOutcome:
    """Submit a turn (or, with `resume`, finish the interrupted one) and take its events up to
    and including `turn_finished`.

    Args:
        client: Where to submit.
        text: What the person says.
        answer: Called with each `approval_requested`; the op it returns (an `Approve` or a
            `Deny`) is submitted. None leaves approvals waiting (then `react` must answer).
        react: Called with every event; an op it returns is submitted (an `Interrupt` when a
            tool starts, say).
        agent: The agent to address; the session's first when None.
        attachments: Images sent with the message.
        resume: Submit `ResumeRun` instead of a new turn.
        agents: Several starting agents, each given the message at once (`UserTurn.agents`).

    Raises:
        RuntimeError: The event stream ended before the turn did.
    """
    subscription = client.subscribe()
    op: ops.Op = (
        ops.ResumeRun()
        if resume
        else ops.UserTurn(
            text=text, agent=agent, attachments=tuple(attachments), agents=tuple(agents)
        )
    )
    submission = client.submit(op)
    seen: list[ev.Event] = []
    try:
        async for event in subscription:
            seen.append(event)
            reply = react(event) if react is not None else None
            if reply is None and answer is not None and isinstance(event, ev.ApprovalRequested):
                reply = answer(event)
            if reply is not None:
                client.submit(reply)
            if isinstance(event, ev.TurnFinished):
                return TurnOutcome(event, seen, submission)
    finally:
        subscription.close()
    raise RuntimeError(f"the event stream ended before the turn did; saw {len(seen)} events")


def approve(event: ev.ApprovalRequested, **fields: object) -> ops.Approve:
    """An `Approve` of exactly this request (its agent call and tool call)."""
    return ops.Approve(tool_call_id=event.tool_call_id, call_id=event.call_id, **fields)  # type: ignore[arg-type]


def deny(event: ev.ApprovalRequested, feedback: str = "") -> ops.Deny:
    """A `Deny` of exactly this request, with `feedback` for the model."""
    return ops.Deny(tool_call_id=event.tool_call_id, call_id=event.call_id, feedback=feedback)
