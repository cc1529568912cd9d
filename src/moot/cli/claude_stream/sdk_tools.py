"""An Agent SDK's in-process MCP servers (`create_sdk_mcp_server`): `--mcp-config` names them
(`type: sdk`), and moot speaks MCP's JSON-RPC with each over the control protocol
(`mcp_message`): `initialize` and `tools/list` once the SDK is connected, `tools/call` for each
call the model makes. Their tools are `mcp__<server>__<tool>`, as any MCP server's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from moot._version import __version__
from moot.cli.claude_stream.control import ControlChannel, ControlError
from moot.protocol.client_tools import ClientTool

PROTOCOL_VERSION = "2025-06-18"


class SdkTools:
    """`ClientTools` served by the SDK's in-process servers.

    Args:
        servers: The servers' names, from `--mcp-config`.
    """

    def __init__(self, servers: list[str], manifests: dict[str, Any] | None = None) -> None:
        self.servers = list(dict.fromkeys(servers))
        self.manifests = manifests or {}
        """Servers whose tools the SDK listed in `initialize` (the TypeScript SDK's)."""
        self.channel: ControlChannel | None = None
        self._publish: Callable[[list[ClientTool]], None] | None = None
        self._tools: dict[str, tuple[str, str]] = {}
        """A tool's name -> its server and its own name there."""
        self._ids = 0
        self.problems: dict[str, str] = {}
        """A server that could not be listed -> why."""

    def attach(self, publish: Callable[[list[ClientTool]], None]) -> None:
        self._publish = publish

    async def _ask(self, server: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One JSON-RPC request to `server`: its result.

        Raises:
            ControlError: No SDK, or the server answered an error.
        """
        if self.channel is None:
            raise ControlError("the SDK is not connected")
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        answer = await self.channel.ask(
            {"subtype": "mcp_message", "server_name": server, "message": message}
        )
        reply = answer.get("mcp_response") or {}
        if "error" in reply:
            raise ControlError(str((reply["error"] or {}).get("message") or reply["error"]))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    async def _tell(self, server: str, method: str) -> None:
        """A JSON-RPC notification (no answer is read but the control response)."""
        assert self.channel is not None
        message = {"jsonrpc": "2.0", "method": method}
        await self.channel.ask(
            {"subtype": "mcp_message", "server_name": server, "message": message}
        )

    async def connect(self) -> None:
        """List every server's tools and publish them (a server that fails is left out, with
        why in `problems`)."""
        listed: list[ClientTool] = []
        for server in self.servers:
            if server in self.manifests:
                listing = (self.manifests[server] or {}).get("toolsListResult") or {}
                listed += self._listed(server, listing)
                continue
            hello = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}}
            hello["clientInfo"] = {"name": "moot", "version": __version__}
            try:
                await self._ask(server, "initialize", hello)
                await self._tell(server, "notifications/initialized")
                result = await self._ask(server, "tools/list", {})
            except ControlError as exc:
                self.problems[server] = str(exc)
                continue
            listed += self._listed(server, result)
        if self._publish is not None:
            self._publish(listed)

    def _listed(self, server: str, result: dict[str, Any]) -> list[ClientTool]:
        """The tools of a `tools/list` result, named as moot names MCP tools."""
        listed = []
        for tool in result.get("tools") or ():
            name = f"mcp__{server}__{tool['name']}"
            self._tools[name] = (server, tool["name"])
            hints = tool.get("annotations") or {}
            listed.append(
                ClientTool(
                    name=name,
                    description=tool.get("description") or "",
                    input_schema=tool.get("inputSchema") or {"type": "object"},
                    read_only=bool(hints.get("readOnlyHint")),
                )
            )
        return listed

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        server, tool = self._tools[name]
        try:
            result = await self._ask(server, "tools/call", {"name": tool, "arguments": arguments})
        except ControlError as exc:
            return str(exc), True
        parts = [
            block["text"] if block.get("type") == "text" else json.dumps(block)
            for block in result.get("content") or ()
        ]
        return "\n".join(parts), bool(result.get("isError"))
