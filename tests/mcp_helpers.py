"""Helpers for the MCP tests (not a test module): server definitions, settings files, waiting."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from moot.protocol.mcp import McpControl, McpServerStatus

SERVERS = Path(__file__).with_name("mcp_servers.py")


def server(kind: str, **fields: Any) -> dict[str, Any]:
    """A stdio definition of one of `tests/mcp_servers.py`'s servers."""
    return {"command": sys.executable, "args": [str(SERVERS), kind], **fields}


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def user_servers(home: Path, servers: dict[str, Any], **settings: Any) -> Path:
    """Servers in the user's settings (`$MOOT_HOME/config/settings.json`): trusted."""
    return write_json(home / "config" / "settings.json", {"mcpServers": servers, **settings})


def project_servers(root: Path, servers: dict[str, Any]) -> Path:
    """Servers in the repository's `.mcp.json`: they wait for approval."""
    return write_json(root / ".mcp.json", {"mcpServers": servers})


def script(path: Path, *turns: dict[str, Any]) -> str:
    """A scripted model (JSON is YAML) playing `turns`; returns the model name."""
    path.write_text(json.dumps({"turns": list(turns)}))
    return f"scripted:{path}"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def wait_for(
    client: McpControl, name: str, states: tuple[str, ...] = ("ready", "failed"), limit: float = 90
) -> McpServerStatus:
    """Poll the client until server `name` reaches one of `states` (bounded: a server is
    another process)."""
    deadline = time.monotonic() + limit
    while True:
        found = {s.name: s for s in client.mcp_servers()}[name]
        if found.state in states:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} stayed {found.state} ({found.error})")
        await asyncio.sleep(0.05)
