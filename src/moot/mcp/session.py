"""A session's MCP servers, made from its settings: what `moot.client.assemble` calls.

Two steps, because the assembly needs the first before the sandbox exists: `session_servers`
reads the definitions (and names the repository scripts they run, which are then protected like
hook scripts: read-only in the sandbox, a file tool's write of one always asks), and
`session_mcp` makes the manager.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from moot.mcp.config import LoadedServers, fingerprint, load_servers, workspace_files
from moot.protocol.mcp import McpServerConfig

if TYPE_CHECKING:
    from moot.mcp.manager import McpManager


def session_servers(
    cwd: Path, environ: Mapping[str, str], extra: Sequence[McpServerConfig] = ()
) -> LoadedServers | None:
    """The servers the files (and a front end, `extra`) define; None when there are none."""
    # A front end's servers have no file to take a fingerprint of: their definition is it (the
    # cache of their tools is kept by it).
    extra = [
        s if s.fingerprint else msgspec.structs.replace(s, fingerprint=fingerprint(s.name, _raw(s)))
        for s in extra
    ]
    loaded = load_servers(cwd, environ, extra=extra)
    return loaded if loaded.servers or loaded.problems else None


def server_scripts(loaded: LoadedServers | None, cwd: Path) -> tuple[str, ...]:
    """The workspace files the stdio servers' command lines name (workspace-relative): they run
    on the host, so nothing in the session may change them unasked."""
    if loaded is None:
        return ()
    named: set[str] = set()
    for server in loaded.servers.values():
        if server.transport == "stdio" and server.command and not server.problem:
            named.update(workspace_files([server.command, *server.args], cwd))
    return tuple(sorted(named))


def session_mcp(
    loaded: LoadedServers | None,
    cwd: Path,
    environ: Mapping[str, str],
    *,
    outputs_dir: Path,
    hidden: Callable[[str], bool],
    allowed: Collection[str] = (),
    tool_search: str | None = None,
    roots: Sequence[Path] = (),
    asks: bool = False,
) -> McpManager | None:
    """The session's MCP manager; None when nothing defines a server.

    Args:
        loaded: What `session_servers` read.
        cwd: The workspace root.
        environ: The session's environment (the servers' start).
        outputs_dir: Where capped results are saved in full.
        hidden: Whether a deny rule removes a tool.
        allowed: Repository servers allowed to start without an approval this time
            (`--allow-project-mcp`; `*` for all).
        tool_search: The settings' `mcpToolSearch` (`auto` when None).
        roots: Directories besides the workspace the session works in (`--add-dir`).
        asks: The front end puts the servers' questions to the person (`PersonAsks`, bound to
            the session's events once its runtime exists); else the servers may not ask.
    """
    if loaded is None:
        return None  # no server: the manager, tools and approvals never load
    from moot.mcp.approvals import Approvals
    from moot.mcp.manager import McpManager
    from moot.mcp.questions import PersonAsks

    return McpManager(
        loaded,
        Approvals(cwd, allowed=allowed),
        workspace=cwd,
        outputs_dir=outputs_dir,
        environ=dict(environ),
        tool_search=tool_search or "auto",
        hidden=hidden,
        roots=roots,
        elicit=PersonAsks() if asks else None,
    )


def _raw(server: McpServerConfig) -> object:
    return msgspec.to_builtins(server)
