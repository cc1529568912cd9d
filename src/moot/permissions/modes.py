"""The permission modes a session can be in; the mode belongs to the session, never the process."""

from __future__ import annotations

from enum import StrEnum


class PermissionMode(StrEnum):
    """How tool calls that no rule settles are decided (see `moot.permissions.decide`)."""

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
