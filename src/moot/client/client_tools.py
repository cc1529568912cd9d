"""A front end's own tools (`protocol.client_tools`) as tools of the session's runtime."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from moot.protocol.approval import SideEffect
from moot.protocol.client_tools import ClientTool, ClientTools
from moot.tools.base import Tool, ToolContext, ToolResult


class FrontEndTool:
    """One of the front end's tools; decided like an MCP server's (it asks unless a rule
    allows it, and plan mode refuses it unless read-only)."""

    def __init__(self, info: ClientTool, source: ClientTools) -> None:
        self.name = info.name
        self.description = info.description or info.name
        schema = info.input_schema
        self.parameters = schema if schema.get("type") == "object" else {"type": "object"}
        self.side_effect = SideEffect.NETWORK if info.read_only else SideEffect.RUNS_COMMANDS
        self._source = source

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            text, failed = await self._source.call(self.name, arguments)
        except Exception as exc:  # the front end's own failure: the model reads it
            return ToolResult.error(f"{self.name} failed: {exc}")
        return ToolResult.error(text) if failed else ToolResult(text)


def attach_client_tools(source: ClientTools, tools: MutableMapping[str, Tool]) -> None:
    """Keep the front end's tools in the runtime's `tools` as it publishes them."""
    published: set[str] = set()

    def publish(infos: list[ClientTool]) -> None:
        for name in published - {i.name for i in infos}:
            tools.pop(name, None)
        for info in infos:
            if info.name not in tools or info.name in published:
                tools[info.name] = FrontEndTool(info, source)
        published.clear()
        published.update(i.name for i in infos)

    source.attach(publish)
