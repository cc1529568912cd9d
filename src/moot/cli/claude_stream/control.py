"""The control protocol of Claude Code's headless mode, on the same pipes as the messages.

Both sides send `control_request` lines (`{"type": "control_request", "request_id", "request":
{"subtype", ...}}`) and answer the other's with `control_response` (`{"type":
"control_response", "response": {"subtype": "success" | "error", "request_id", "response" |
"error"}}`), as the Agent SDKs' `_internal/query.py` reads and writes them. The SDK asks moot
(`initialize`, `interrupt`, `set_permission_mode`, `set_model`, `mcp_status`, `mcp_reconnect`,
`get_context_usage`); moot asks the SDK (`can_use_tool`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

Line = dict[str, Any]


class ControlError(Exception):
    """The other side answered a control request with an error."""


def success(request_id: str, response: dict[str, Any] | None = None) -> Line:
    body = {"subtype": "success", "request_id": request_id, "response": response or {}}
    return {"type": "control_response", "response": body}


def failure(request_id: str, error: str) -> Line:
    body = {"subtype": "error", "request_id": request_id, "error": error}
    return {"type": "control_response", "response": body}


class ControlChannel:
    """moot's own requests to the SDK, each waiting for its answer.

    Args:
        write: Writes one line to stdout.
    """

    def __init__(self, write: Callable[[Line], None]) -> None:
        self._write = write
        self._waiting: dict[str, asyncio.Future[Line]] = {}
        self._count = 0

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send `request`; its answer's `response`.

        Raises:
            ControlError: The SDK answered with an error, or went away first.
        """
        self._count += 1
        request_id = f"moot_{self._count}"
        answer: asyncio.Future[Line] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        self._write({"type": "control_request", "request_id": request_id, "request": request})
        body = await answer
        if body.get("subtype") == "error":
            raise ControlError(str(body.get("error") or "the SDK's callback failed"))
        response = body.get("response")
        return response if isinstance(response, dict) else {}

    def answered(self, body: Line) -> None:
        """A `control_response`'s `response` arrived."""
        waiting = self._waiting.pop(str(body.get("request_id")), None)
        if waiting is not None and not waiting.done():
            waiting.set_result(body)

    def close(self) -> None:
        """The SDK went away: nobody answers what still waits."""
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result({"subtype": "error", "error": "the SDK closed its input"})
        self._waiting.clear()


def dumps(line: Line) -> str:
    return json.dumps(line, default=str) + "\n"
