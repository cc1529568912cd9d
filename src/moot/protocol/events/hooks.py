"""What the settings' hook commands did on a session event (`hook_ran`)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from moot.protocol.events.base import EventBase

HookEventName = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "Notification",
]


class HookCommandRun(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One hook command that ran: how it ended, and the start of what it printed."""

    command: str
    exit_code: int | None = None
    """None when it timed out or could not start."""
    duration_ms: float = 0.0
    outcome: Literal["ok", "allow", "ask", "deny", "block", "stop", "error", "timeout"]
    """What this command said: `error` and `timeout` are non-blocking errors."""
    stdout: str = ""
    """Capped; the head is kept."""
    stderr: str = ""


class HookRan(EventBase, tag="hook_ran", frozen=True):
    """Hook commands from the settings ran on a session event; what they agreed on.

    The fold applies it, so a resumed run sees what the live one saw: `context` joins the
    prompt (SessionStart, UserPromptSubmit) or a tool result (PostToolUse), or is a Stop
    hook's feedback as a new user message; `updated_input` replaces a tool call's arguments.
    """

    hook_event: HookEventName
    commands: tuple[HookCommandRun, ...] = ()
    tool_call_id: str | None = None
    """PreToolUse and PostToolUse: the tool call the hooks saw."""
    decision: Literal["none", "allow", "ask", "deny", "block"] = "none"
    reason: str = ""
    context: str = ""
    """What the model is told because of the hooks (empty: nothing)."""
    updated_input: dict[str, Any] | None = None
    """PreToolUse: the arguments the tool call runs with instead of the model's."""
    stop: bool = False
    """A hook said `continue: false`: the run ends with stop reason `hook_blocked`."""
    stop_reason: str = ""
    """With `stop`: the hook's `stopReason`, shown to the person."""
