"""The `result` message that ends a headless turn, and the `system`/`init` line that opens one.

The result is one object for both formats: Claude Code's fields (`type`, `subtype`,
`is_error`, `num_turns`, `total_cost_usd`, `result`, ...) and moot's own (`state`,
`stop_reason`, `output`, `turns`, `cost_usd`, `error`, `run_id`), so scripts written for either
read it unchanged.
"""

from __future__ import annotations

import uuid
from typing import Any

import msgspec

from moot._version import __version__
from moot.cli.claude_stream.messages import claude_usage
from moot.protocol import events as ev
from moot.protocol.client import SessionStatus
from moot.protocol.mcp import McpServerStatus
from moot.protocol.states import RunState, StopReason

SUBTYPES: dict[StopReason, str] = {
    StopReason.COMPLETED: "success",
    StopReason.MAX_TURNS: "error_max_turns",
    StopReason.MAX_COST: "error_max_budget_usd",
}
"""Claude Code's `subtype` for how a run ended; any other end is `error_during_execution`."""

MCP_STATES: dict[str, str] = {
    "ready": "connected",
    "starting": "pending",
    "needs_approval": "pending",
    "auth_required": "needs-auth",
    "disabled": "disabled",
}
"""Claude Code's name for a server's state; any other state is `failed`."""


def result_object(
    finished: ev.TurnFinished,
    session_id: str,
    error: str = "",
    denials: list[dict[str, object]] | None = None,
    *,
    api_ms: float = 0.0,
    structured: object = None,
    subtype: str = "",
) -> dict[str, Any]:
    """The turn's result, as `--output-format json` prints it and `stream-json` ends with.

    Args:
        finished: The turn's end.
        session_id: Its session.
        error: Why a run that did not complete ended (the provider's message, the limit hit).
        denials: The tool calls refused, as Claude Code lists them (`tool_name`,
            `tool_use_id`, `tool_input`) with moot's `reason`.
        api_ms: The time spent waiting for models (`duration_api_ms`).
        structured: The answer parsed against `--json-schema`, if one was given.
        subtype: Overrides the subtype the stop reason gives.
    """
    completed = finished.state is RunState.COMPLETED
    problem = None if completed else error or str(finished.stop_reason)
    return {
        "type": "result",
        "subtype": subtype or SUBTYPES.get(finished.stop_reason, "error_during_execution"),
        "is_error": not completed,
        "num_turns": finished.turns,
        "duration_ms": round(finished.duration_ms, 1),
        "duration_api_ms": round(api_ms, 1),
        "total_cost_usd": finished.cost_usd,
        "usage": claude_usage(finished.usage) | msgspec.structs.asdict(finished.usage),
        "result": finished.output,
        "session_id": session_id,
        "structured_output": structured,
        "permission_denials": denials or [],
        "errors": [] if problem is None else [problem],
        "uuid": str(uuid.uuid4()),
        # moot's own names, as before the Claude fields came
        "run_id": finished.run_id,
        "state": finished.state,
        "stop_reason": finished.stop_reason,
        "output": finished.output,
        "turns": finished.turns,
        "cost_usd": finished.cost_usd,
        "error": problem,
    }


def refused_result(session_id: str, reason: str) -> dict[str, Any]:
    """The result of a turn the session would not take: nothing ran."""
    return {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "num_turns": 0,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "total_cost_usd": 0.0,
        "usage": claude_usage(_NO_USAGE),
        "result": "",
        "session_id": session_id,
        "structured_output": None,
        "permission_denials": [],
        "errors": [reason],
        "uuid": str(uuid.uuid4()),
        "error": reason,
    }


class _NoUsage:
    input_tokens = output_tokens = cache_read_tokens = cache_write_tokens = 0


_NO_USAGE = _NoUsage()


def init_message(
    status: SessionStatus,
    servers: list[McpServerStatus],
    given: tuple[str, ...] | None = None,
    sdk_servers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The `system`/`init` line: the session, where it works, its model, mode and tools (only
    those `given`, when `--tools` names them)."""
    commands = [c.name for c in status.instructions.commands]
    tools = [t for t in status.tools if given is None or t in given]
    return {
        "type": "system",
        "subtype": "init",
        "session_id": status.session_id,
        "cwd": status.workspace,
        "model": status.model,
        "permissionMode": status.mode or "default",
        "tools": tools,
        "mcp_servers": [
            *({"name": s.name, "status": MCP_STATES.get(s.state, "failed")} for s in servers),
            *({"name": n, "status": state} for n, state in (sdk_servers or {}).items()),
        ],
        "slash_commands": [*commands, *(s for s in status.skills if s not in commands)],
        "agents": [a.name for a in status.agents],
        "skills": [*status.skills],
        "apiKeySource": "none",
        "output_style": "default",
        "uuid": str(uuid.uuid4()),
        "moot_version": __version__,
    }
