"""MCP servers given to the Python API (`moot.run(..., mcp_servers={...})`).

They are defined as in `.mcp.json` (`{"name": {"command": ..., "args": [...]}}` or
`{"name": {"type": "http", "url": ...}}`), come from the program itself (so they start without
an approval, as an editor's do), and live as long as the run: the first model request waits
for them (bounded as a headless run's is), and they stop when the run ends. A server's
question (elicitation) goes to the program's `on_elicit`; without one, the servers are not
told they may ask, as in a headless run.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moot.mcp.manager import McpManager
    from moot.mcp.questions import Elicitor


def sdk_servers(
    definitions: Mapping[str, Any], elicit: Elicitor | None = None, cwd: Path | None = None
) -> McpManager:
    """A manager of the servers `definitions` names (not started yet); `elicit` answers their
    questions (None: they are not told they may ask).

    Raises:
        ValueError: A definition cannot be used (the message says which and why).
    """
    from moot.mcp.approvals import Approvals
    from moot.mcp.config import LoadedServers, parse_server
    from moot.mcp.manager import McpManager

    root = (cwd or Path.cwd()).resolve()
    environ = dict(os.environ)
    servers = {
        name: parse_server(name, raw, origin="client", source="moot.run", environ=environ)
        for name, raw in definitions.items()
    }
    if wrong := [f"{s.name}: {s.problem}" for s in servers.values() if s.problem]:
        raise ValueError("MCP servers that cannot start: " + "; ".join(wrong))
    outputs = Path(tempfile.mkdtemp(prefix="moot-mcp-outputs-"))
    return McpManager(
        LoadedServers(servers=servers),
        Approvals(root, allowed=("*",)),
        workspace=root,
        outputs_dir=outputs,
        environ=environ,
        elicit=elicit,
    )
