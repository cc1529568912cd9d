"""`moot_task`: a whole moot agent on a task, for another agent, through the client surface.

Each call opens a session (or continues `session_id`) with `moot.client.local.open_client`, as
any front end does, submits the task and follows its events to `turn_finished`. Approvals go to
the MCP client's person when it can be asked while the task runs (an elicitation on a
handshake-era connection); otherwise what would ask is refused, as in a headless run. The
answer ends with the session's id, to continue it, and how the run ended.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from moot.client.errors import SetupError
from moot.client.local import SessionOptions, open_client
from moot.mcp_server.tools import Answer
from moot.protocol import events as ev
from moot.protocol import ops
from moot.tools.base import ToolResult

TASK_TOOL = "moot_task"
TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "description": "What moot should do, in plain words."},
        "session_id": {
            "type": "string",
            "description": "Continue this earlier moot session (from an earlier answer).",
        },
    },
    "required": ["task"],
}

AskPerson = Callable[[str], Awaitable[Answer]]


async def run_task(
    options: SessionOptions, arguments: dict[str, Any], ask: AskPerson | None
) -> ToolResult:
    """Run one task to its end.

    Args:
        options: The session options `moot mcp serve` was started with.
        arguments: The call's `task` and optional `session_id`.
        ask: Puts an approval to the MCP client's person; None: what would ask is refused.
    """
    task, session_id = arguments.get("task"), arguments.get("session_id")
    if not isinstance(task, str) or not task.strip():
        return ToolResult.error("moot_task needs a `task` string")
    if session_id is not None and not isinstance(session_id, str):
        return ToolResult.error("`session_id` must be a string")
    try:
        client = open_client(
            msgspec.structs.replace(
                options,
                session_id=session_id,
                title=task.strip().splitlines()[0][:80],
                can_ask=ask is not None,
            )
        )
    except SetupError as exc:
        return ToolResult.error(f"moot could not start: {exc}")
    finished: ev.TurnFinished | None = None
    try:
        events = client.subscribe()
        client.submit(ops.UserTurn(text=task))
        async for event in events:
            if isinstance(event, ev.ApprovalRequested) and ask is not None:
                answer = await ask(f"{event.tool}: {event.reason}\n\n{event.preview[:4000]}")
                client.submit(
                    ops.Approve(
                        tool_call_id=event.tool_call_id,
                        call_id=event.call_id,
                        scope="session" if answer.scope == "session" else "once",
                    )
                    if answer.allowed
                    else ops.Deny(
                        tool_call_id=event.tool_call_id, call_id=event.call_id, feedback=answer.why
                    )
                )
            if isinstance(event, ev.TurnFinished):
                finished = event
                break
        events.close()
    finally:
        await client.close()
    if finished is None:
        return ToolResult.error(f"moot session {client.session_id} ended without an answer")
    ending = f"[moot session {client.session_id}: {finished.state}, {finished.stop_reason}]"
    text = f"{finished.output}\n\n{ending}" if finished.output else ending
    structured = {
        "answer": finished.output,
        "session_id": client.session_id,
        "state": str(finished.state),
        "stop_reason": str(finished.stop_reason),
    }
    return ToolResult(text, is_error=finished.state != "completed", display=structured)


TASK_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "description": "moot's answer"},
        "session_id": {"type": "string", "description": "pass it to continue the session"},
        "state": {"type": "string", "description": "how the run ended: completed, failed, ..."},
        "stop_reason": {"type": "string"},
    },
    "required": ["answer", "session_id", "state", "stop_reason"],
}
"""`moot_task`'s structured result (`outputSchema`)."""
