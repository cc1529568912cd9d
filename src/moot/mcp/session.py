"""A session's MCP servers, made from its settings: what `moot.client.assemble` calls."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from moot.mcp.approvals import Approvals
from moot.mcp.config import load_servers
from moot.mcp.manager import McpManager
from moot.protocol.mcp import McpServerConfig


def session_mcp(
    cwd: Path,
    environ: Mapping[str, str],
    *,
    outputs_dir: Path,
    hidden: Callable[[str], bool],
    extra: Sequence[McpServerConfig] = (),
    allowed: Collection[str] = (),
    tool_search: str | None = None,
) -> McpManager | None:
    """The session's MCP manager; None when no file (and no front end) defines a server.

    Args:
        cwd: The workspace root.
        environ: The session's environment (`${VAR}` expansion, the servers' start).
        outputs_dir: Where capped results are saved in full.
        hidden: Whether a deny rule removes a tool.
        extra: Servers the front end brings (an editor over ACP).
        allowed: Repository servers allowed to start without an approval this time
            (`--allow-project-mcp`; `*` for all).
        tool_search: The settings' `mcpToolSearch` (`auto` when None).
    """
    loaded = load_servers(cwd, environ, extra=extra)
    if not loaded.servers and not loaded.problems:
        return None
    return McpManager(
        loaded,
        Approvals(cwd, allowed=allowed),
        workspace=cwd,
        outputs_dir=outputs_dir,
        environ=dict(environ),
        tool_search=tool_search or "auto",
        hidden=hidden,
    )
