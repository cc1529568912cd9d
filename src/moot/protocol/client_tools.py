"""Tools a front end runs itself, offered to the model beside the session's own: an Agent SDK's
in-process MCP servers, whose calls go back over the control protocol. They may become known
only after the session opens (the SDK lists them once it is connected)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import msgspec


class ClientTool(msgspec.Struct, frozen=True):
    """One tool as the model is offered it."""

    name: str
    """As MCP tools are named: `mcp__<server>__<tool>`."""
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    """The server's hint; as for any MCP tool, it decides nothing on its own (such a tool is
    still a network call that asks in the default mode)."""


class ClientTools(Protocol):
    """The front end's tools: it publishes them as they become known, and runs their calls."""

    def attach(self, publish: Callable[[list[ClientTool]], None]) -> None:
        """Called once the session is assembled: `publish` replaces the front end's tools in
        what the model is offered from its next request on."""
        ...

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run `name` with `arguments`: the text the model reads, and whether it is an error."""
        ...
