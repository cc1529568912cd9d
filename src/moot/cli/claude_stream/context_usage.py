"""`get_context_usage`: moot's context report (`/context`) in the shape of Claude Code's answer
(the Agent SDKs' `ContextUsageResponse`)."""

from __future__ import annotations

from typing import Any

from moot.client.local import LocalClient

COMPACT_AT = 0.8
"""The share of the window past which moot compacts, unless the settings say (`autoCompactAt`)."""


def context_usage(client: LocalClient) -> dict[str, Any]:
    """What fills the person's agent's context now, part by part (estimated tokens).

    moot's parts are its own (`system prompt`, `tools`, `messages`, ...); it does not break
    memory files, MCP tools and agents out, so those lists are empty, and it draws no grid.
    """
    report = client.context()
    window = report.context_window or 0
    total = report.tokens
    share = client.status().settings.get("autoCompactAt") or COMPACT_AT
    answer: dict[str, Any] = {
        "categories": [{"name": p.name, "tokens": p.tokens, "color": ""} for p in report.parts],
        "totalTokens": total,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": round(100 * total / window, 1) if window else 0.0,
        "model": report.model,
        "isAutoCompactEnabled": True,
        "memoryFiles": [],
        "mcpTools": [],
        "agents": [],
        "gridRows": [],
    }
    if window:
        answer["autoCompactThreshold"] = int(window * share)
    return answer
