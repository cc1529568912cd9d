"""Textual messages the app's widgets send one another (one-line docstrings, as events have)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from moot.protocol import events as ev
from moot.protocol.messages import Attachment


@dataclass
class SessionEvent(Message):
    """An event of the session, other than a text or thinking delta, as it was stored."""

    event: ev.Event


@dataclass
class Streamed(Message):
    """Text or thinking that streamed in since the last flush, coalesced per agent call."""

    call_id: str
    agent: str
    kind: str
    """`text` or `thinking`."""
    text: str
    depth: int


@dataclass
class PromptSubmitted(Message):
    """The person sent what they typed (pasted blocks expanded), with its chips' images."""

    text: str
    attachments: tuple[Attachment, ...] = ()


@dataclass
class Answered(Message):
    """The person answered an approval; the op is ready to submit."""

    op: object
