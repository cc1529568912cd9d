"""Events of a tool call: its approval, its start, its output as it runs and its result."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from moot.protocol.events.base import EventBase
from moot.protocol.messages import Attachment


class ApprovalRequested(EventBase, tag="approval_requested", frozen=True):
    """A tool call waits for the person: answer with `Approve` or `Deny`."""

    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    preview: str = ""
    """What the person should look at: a diff, the exact command, ..."""
    reason: str = ""
    suggested_rules: tuple[str, ...] = ()
    """Allow rules an answer "for the session" or "always" would keep."""


class ApprovalDecided(EventBase, tag="approval_decided", frozen=True):
    """A tool call was allowed or refused, by a person or a rule."""

    tool_call_id: str
    approved: bool
    by: Literal["user", "policy", "hook"]
    """"hook": a PreToolUse hook from the settings refused or allowed the call."""
    feedback: str = ""
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    """The allow rule kept by a "session" or "always" approval."""
    updated_input: dict[str, Any] | None = None
    """The arguments the call runs with, when the approval changed the model's."""


class ToolStarted(EventBase, tag="tool_started", frozen=True):
    """A tool began to run; from here on it may have had side effects."""

    tool_call_id: str
    tool: str
    arguments: dict[str, Any]


class ToolOutput(EventBase, tag="tool_output", frozen=True):
    """Output a running tool produced so far."""

    tool_call_id: str
    text: str


class ToolFinished(EventBase, tag="tool_finished", frozen=True):
    """A tool's result: what the model will see."""

    tool_call_id: str
    tool: str
    content: str
    is_error: bool = False
    attachments: tuple[Attachment, ...] = ()
    duration_ms: float = 0.0
    interrupted: bool = False
    """The tool started before a crash or an interrupt and its real result is unknown."""
    display: dict[str, Any] = msgspec.field(default_factory=dict)
    """Structured data for front ends (a diff, a task list); never sent to the model."""
