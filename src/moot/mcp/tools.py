"""MCP tools as moot tools: `mcp__<server>__<tool>`, through `decide()` like every tool.

Their side effect is never read from the server's hints alone (the MCP spec says hints from an
untrusted server decide nothing): a tool the server marks read-only is `NETWORK` (it asks in
the default mode and in plan mode, like `web_fetch`), any other `RUNS_COMMANDS` (it asks, and
plan mode refuses it). Allow rules such as `mcp__github__*` or `mcp__github__get_issue` let
them run.

When a session's servers bring more than `TOOL_SEARCH_BUDGET` bytes of tool specs, the tools of
the servers past the budget are *deferred*: callable, but not offered to the model, which sees
their names and one line each in `mcp_tool_search`'s description and loads the full schemas on
demand with that tool (a loaded tool is offered from the next model call on).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from moot.protocol.approval import SideEffect
from moot.tools.base import ToolContext, ToolResult

if TYPE_CHECKING:
    from moot.mcp.wire import ToolDef

SEARCH_TOOL = "mcp_tool_search"
TOOL_SEARCH_BUDGET = 16_000
"""Bytes of MCP tool specs (names, descriptions, schemas) sent in full before servers' tools
are deferred (`mcpToolSearch: "auto"`); the built-in tools' take about 4,700."""
ONE_LINE = 120
MAX_RESULTS = 10

Invoke = Callable[["McpTool", dict[str, Any], Callable[[str], None]], Any]
"""Calls the tool: (the tool, its arguments, where its progress lines go)."""


def one_line(text: str) -> str:
    """A description's first line, cut to `ONE_LINE` characters."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    return first if len(first) <= ONE_LINE else first[: ONE_LINE - 3] + "..."


class McpTool:
    """One server's tool. `deferred` tools are callable but not offered (see the module)."""

    def __init__(self, name: str, server: str, definition: ToolDef, invoke: Invoke) -> None:
        self.name = name
        self.server = server
        self.tool = definition.name
        self.description = definition.description or f"{definition.name} (MCP server {server})"
        self.parameters: dict[str, Any] = _object_schema(definition.input_schema)
        self.side_effect = SideEffect.NETWORK if definition.read_only else SideEffect.RUNS_COMMANDS
        self.deferred = False
        self._invoke = invoke

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, deferred={self.deferred})"

    @property
    def spec_bytes(self) -> int:
        """What a model request carries for this tool when offered in full."""
        return len(self.name) + len(self.description) + len(json.dumps(self.parameters))

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result: ToolResult = await self._invoke(self, arguments, ctx.emit)
        return result


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A server's input schema, made an object schema when it is not one (providers need it)."""
    if isinstance(schema, dict) and schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {}}


SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words to look for in the tools' names and descriptions, or "
            "`select:<name>,<name>` for those tools exactly.",
        }
    },
    "required": ["query"],
}


class ToolSearch:
    """`mcp_tool_search(query)`: the full schemas of deferred MCP tools, which it loads."""

    name = SEARCH_TOOL
    side_effect = SideEffect.READ_ONLY

    def __init__(
        self, deferred: Iterable[McpTool], on_load: Callable[[list[str]], None] | None = None
    ) -> None:
        self.tools = list(deferred)
        self.parameters = SEARCH_PARAMETERS
        self._on_load = on_load
        listing = "\n".join(f"- {t.name}: {one_line(t.description)}" for t in self.tools)
        self.description = (
            "Load the full argument schema of MCP tools listed here by name only. Call it "
            "before calling one of them; a loaded tool can be called from your next step on.\n"
            f"{listing}"
        )

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error("mcp_tool_search needs a `query` string")
        found = self.find(query)
        if not found:
            names = ", ".join(t.name for t in self.tools)
            return ToolResult.error(f"No MCP tool matches {query!r}. Deferred tools: {names}")
        for tool in found:
            tool.deferred = False
        if self._on_load is not None:
            self._on_load([t.name for t in found])
        listed = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in found
        ]
        return ToolResult(json.dumps(listed, indent=1, ensure_ascii=False))

    def find(self, query: str) -> list[McpTool]:
        """The tools `select:a,b` names, or those whose name and description hold the most of
        the query's words."""
        if query.startswith("select:"):
            wanted = {n.strip() for n in query.removeprefix("select:").split(",")}
            return [t for t in self.tools if t.name in wanted]
        words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
        scored = []
        for tool in self.tools:
            haystack = f"{tool.name} {tool.description}".lower()
            score = sum(word in haystack for word in words)
            if score:
                scored.append((-score, tool.name, tool))
        return [tool for _, _, tool in sorted(scored)[:MAX_RESULTS]]


def plan_deferral(
    servers: dict[str, list[McpTool]], mode: str, budget: int = TOOL_SEARCH_BUDGET
) -> set[str]:
    """The servers whose tools are deferred: none (`never`), all (`always`), or (`auto`) those
    that, in name order, would take the MCP tools past `budget` bytes."""
    if mode == "never":
        return set()
    if mode == "always":
        return {name for name, tools in servers.items() if tools}
    deferred: set[str] = set()
    total = 0
    for name in sorted(servers):
        size = sum(t.spec_bytes for t in servers[name])
        if total + size > budget:
            deferred.add(name)
        else:
            total += size
    return deferred
