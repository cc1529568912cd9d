"""An Agent SDK's hook callbacks, registered by its `initialize` request and each run over the
control protocol (`hook_callback`) as the settings' hook commands run."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from moot.cli.claude_stream.control import ControlChannel, ControlError


class SdkHooks:
    """`HookCallbacks` answered by the SDK: empty until `initialize` registers its matchers."""

    def __init__(self) -> None:
        self.channel: ControlChannel | None = None
        self._matchers: dict[str, list[tuple[re.Pattern[str] | None, list[str]]]] = {}

    def register(self, hooks: Mapping[str, Any]) -> None:
        """`initialize`'s `hooks`: `{event: [{"matcher", "hookCallbackIds", "timeout"}]}`.

        Raises:
            ControlError: A matcher that is not a regular expression.
        """
        for event, matchers in hooks.items():
            for entry in matchers or ():
                matcher = entry.get("matcher")
                try:
                    pattern = None if matcher in (None, "", "*") else re.compile(matcher, re.I)
                except re.error as exc:
                    raise ControlError(f"hook matcher {matcher!r}: {exc}") from None
                ids = [str(i) for i in entry.get("hookCallbackIds") or ()]
                self._matchers.setdefault(event, []).append((pattern, ids))

    def matching(self, event: str, subject: str | None) -> list[str]:
        return [
            callback
            for pattern, ids in self._matchers.get(event, ())
            if pattern is None or (subject is not None and pattern.fullmatch(subject))
            for callback in ids
        ]

    async def call(self, callback_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        if self.channel is None:
            raise ControlError("the SDK is not connected")
        request = {
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": dict(payload),
            "tool_use_id": payload.get("tool_use_id"),
        }
        return await self.channel.ask(request)
