"""Hooks a front end answers itself, besides the settings' commands: an Agent SDK's hook
callbacks, which the SDK registers over the control protocol once the session is open."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class HookCallbacks(Protocol):
    """The front end's hooks, asked as the settings' commands are and read as their JSON is
    (`decision`, `hookSpecificOutput.permissionDecision`, `updatedInput`, `continue`, ...)."""

    def matching(self, event: str, subject: str | None) -> list[str]:
        """The callbacks registered for `event` whose matcher matches `subject` (a tool's
        name), by id; read at each event, so callbacks registered later count."""
        ...

    async def call(self, callback_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Run one callback with the event's JSON; what it answers.

        Raises:
            Exception: The callback failed (a non-blocking hook error, as a failed command's).
        """
        ...
