"""Which of a repository's MCP servers the person has approved, per workspace.

A server defined in `.mcp.json` or `.moot/settings*.json` came with the repository, and a stdio
server runs its command on this machine with the person's rights. So it never starts until the
person approves it, once per workspace; the approval is for the definition as written (its
`fingerprint`), so a later commit that changes the command asks again. Approvals live in the
user data directory (`mcp-approvals.json`, 0600), out of the repository's reach.

A run nobody watches (`moot -p`, ACP without a person for it) starts only what was approved
before, what the user's settings allow (`enableAllProjectMcpServers`, `enabledMcpjsonServers`),
or what `--allow-project-mcp` names.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path

from moot.mcp.files import write_object
from moot.protocol.mcp import McpServerConfig

FILE_NAME = "mcp-approvals.json"


def approvals_file(environ: Mapping[str, str] | None = None) -> Path:
    from moot.paths import data_dir

    return data_dir(environ) / FILE_NAME


def _workspace_key(workspace: Path) -> str:
    return os.path.realpath(workspace)


class Approvals:
    """The approvals of one workspace, read once and written through.

    Args:
        workspace: The workspace root.
        path: The approvals file; `approvals_file()` when None.
        allowed: Names approved for this process only (`--allow-project-mcp`), or `*` for all.
    """

    def __init__(
        self, workspace: Path, path: Path | None = None, *, allowed: Collection[str] = ()
    ) -> None:
        self.path = path or approvals_file()
        self.key = _workspace_key(workspace)
        self.allowed = frozenset(allowed)

    def _all(self) -> dict[str, object]:
        import json

        from moot.settings.review import read_own_file

        try:  # only a file of this user's that no one else may write
            data = json.loads(read_own_file(self.path))
        except (OSError, ValueError, RecursionError):
            return {}  # none, unreadable or someone else's: nothing approved; writing replaces it
        return data if isinstance(data, dict) else {}

    def approved(self, server: McpServerConfig) -> bool:
        """Whether this definition of the server was approved here (or for this process)."""
        if server.trusted or "*" in self.allowed or server.name in self.allowed:
            return True
        workspace = self._all().get(self.key)
        return isinstance(workspace, dict) and workspace.get(server.name) == server.fingerprint

    def approve(self, server: McpServerConfig) -> None:
        """Remember that the person approved this definition of the server here.

        Raises:
            ConfigFileError: The approvals file cannot be written.
        """
        data = self._all()
        workspace = data.get(self.key)
        if not isinstance(workspace, dict):
            workspace = data[self.key] = {}
        workspace[server.name] = server.fingerprint
        write_object(self.path, data, private=True)

    def forget(self, name: str) -> None:
        """Drop an approval (the server was removed).

        Raises:
            ConfigFileError: The approvals file cannot be written.
        """
        data = self._all()
        workspace = data.get(self.key)
        if isinstance(workspace, dict) and workspace.pop(name, None) is not None:
            write_object(self.path, data, private=True)
