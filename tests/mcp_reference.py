"""The MCP reference servers from npm (`@modelcontextprotocol/server-everything` and
`server-filesystem`), for tests that try moot with servers its authors did not write.

They are no Python dependency: set `MOOT_MCP_NPM` to a `node_modules` directory that holds
them (`.ci/run` installs them with npm, at the versions below); without it the tests that use
them are skipped, and fail in CI."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

VERSIONS = {"server-everything": "2026.8.31", "server-filesystem": "2026.8.31"}
"""The versions `.ci/run` installs (the README quotes them)."""

INSPECTOR_VERSION = "2.12.0"
"""`@modelcontextprotocol/inspector`, whose CLI (`--cli`) drives `moot mcp serve`."""

NPM = os.environ.get("MOOT_MCP_NPM", "")


def require() -> Path:
    """The `node_modules` holding the servers; skips (fails in CI) when they are absent."""
    root = Path(NPM) / "@modelcontextprotocol" if NPM else None
    node = shutil.which("node")
    if root is not None and node is not None and all((root / name).is_dir() for name in VERSIONS):
        return Path(NPM)
    missing = (
        "MOOT_MCP_NPM (a node_modules holding @modelcontextprotocol/server-everything and "
        "server-filesystem) and node are not set up"
    )
    if os.environ.get("CI"):
        pytest.fail(missing)
    pytest.skip(missing)


def inspector() -> Path:
    """The MCP Inspector's launcher (`MOOT_MCP_NPM`'s `.bin/mcp-inspector`); skips (fails in
    CI) when it is absent."""
    launcher = Path(NPM) / ".bin" / "mcp-inspector" if NPM else None
    if launcher is not None and launcher.exists() and shutil.which("node") is not None:
        return launcher
    missing = "MOOT_MCP_NPM (a node_modules holding @modelcontextprotocol/inspector) is not set up"
    if os.environ.get("CI"):
        pytest.fail(missing)
    pytest.skip(missing)


def everything(modules: Path) -> dict[str, Any]:
    """server-everything over stdio."""
    main = modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    return {"command": "node", "args": [str(main), "stdio"]}


def filesystem(modules: Path, *allowed: Path) -> dict[str, Any]:
    """server-filesystem over stdio, allowed the directories given."""
    main = modules / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    return {"command": "node", "args": [str(main), *map(str, allowed)]}
