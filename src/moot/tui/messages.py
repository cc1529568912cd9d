"""Textual messages the app's widgets send one another (one-line docstrings, as events have).

Plain classes with their own `__init__`, not dataclasses: a dataclass costs ~0.7 ms to create,
and these load before the app's first paint (`scripts/bench --only app`)."""

from __future__ import annotations

from textual.message import Message

from moot.protocol import events as ev
from moot.protocol.messages import Attachment


class SessionEvent(Message):
    """An event of the session, other than a text or thinking delta, as it was stored."""

    def __init__(self, event: ev.Event) -> None:
        super().__init__()
        self.event = event


class Streamed(Message):
    """Text or thinking that streamed in since the last flush, coalesced per agent call."""

    def __init__(self, call_id: str, agent: str, kind: str, text: str, depth: int) -> None:
        super().__init__()
        self.call_id = call_id
        self.agent = agent
        self.kind = kind
        """`text` or `thinking`."""
        self.text = text
        self.depth = depth


class PromptSubmitted(Message):
    """The person sent what they typed (pasted blocks expanded), with its chips' images."""

    def __init__(self, text: str, attachments: tuple[Attachment, ...] = ()) -> None:
        super().__init__()
        self.text = text
        self.attachments = attachments


class Answered(Message):
    """The person answered an approval; the op is ready to submit."""

    def __init__(self, op: object) -> None:
        super().__init__()
        self.op = op
