"""Messages between peers while they run: sent, delivered, and waited for."""

from __future__ import annotations

from moot.protocol.events.base import EventBase


class MessageSent(EventBase, tag="message_sent", frozen=True):
    """A message between peers while they run (`send_message`, or the person's `SendMessage`).

    Recorded in the sender's call; the person's messages in the receiver's call. The receiver
    reads it at its next step (`messages_delivered`)."""

    sender: str
    """The agent that sent it, or `user` (the person)."""
    to_call_id: str | None
    """The receiving call (its task id); None: the person."""
    to_agent: str
    text: str


class MessagesDelivered(EventBase, tag="messages_delivered", frozen=True):
    """A call read the first `count` messages waiting for it (messages, background results),
    just before asking its model: they join its conversation as one user message."""

    count: int


class WaitingForMessage(EventBase, tag="waiting_for_message", frozen=True):
    """The call waits for a message or a background agent's return to reach it: a
    `get_messages` with `wait_seconds`, or an answer held back until its background agents
    return. The `get_messages` waits until its result; an answer held back until the call's
    next event other than a delta or a state change (`protocol.activity`). The fold reads
    nothing from it."""

    timeout_s: float | None = None
    """How long it waits at most; None: until something arrives (its background agents
    return, or are cancelled, within the run's budget)."""
    tool_call_id: str | None = None
    """The `get_messages` tool call that waits; None: the call's answer waits."""
