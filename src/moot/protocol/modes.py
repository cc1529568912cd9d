"""The permission modes, as ops and events carry them and the permission layer reads them.

What each mode does is `moot.permissions.decide`'s business; the protocol names them, so front
ends can switch modes and tools can read theirs (`ToolContext.mode`) without importing the
permission layer (and the permission layer, which sees tools, never has tools importing it).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

ModeName = Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]


class PermissionMode(StrEnum):
    """How tool calls that no rule settles are decided (see `moot.permissions.decide`); the
    mode belongs to the session, never the process."""

    DEFAULT = "default"
    """Read-only tools run; everything else asks unless an allow rule covers it."""
    ACCEPT_EDITS = "acceptEdits"
    """As `default`, and file edits and writes inside the workspace run too."""
    PLAN = "plan"
    """Explore only: read-only tools run, tools that change things are refused until the
    person approves a plan (`exit_plan_mode`)."""
    DONT_ASK = "dontAsk"
    """For CI and headless runs: whatever would ask is refused, with the reason."""
    BYPASS_PERMISSIONS = "bypassPermissions"
    """Everything runs except what a deny rule refuses; nothing asks."""
