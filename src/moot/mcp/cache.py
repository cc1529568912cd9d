"""What each server offered last time, by definition (`<cache dir>/mcp-tools/<fingerprint>.json`):
a session's first model request carries a server's tools before the server is up."""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import msgspec

from moot.mcp.wire import ToolDef
from moot.protocol.mcp import McpPromptInfo, McpServerConfig


class Offered(msgspec.Struct):
    """A server's tools, prompts and resources, as it listed them."""

    tools: tuple[ToolDef, ...] = ()
    prompts: tuple[McpPromptInfo, ...] = ()
    resources: tuple[str, ...] = ()


class ToolCache:
    """The cache directory; a file that cannot be read is a miss, one that cannot be written
    is skipped."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, config: McpServerConfig) -> Path:
        # By the definition and the file that made it: a repository's `.mcp.json` may copy a
        # server of the person's settings word for word, and what its server offered (started in
        # that repository, maybe its own `node_modules/pkg`) would be the tools, and their
        # descriptions, the person's server brings to the first request in every other one.
        where = f"{config.fingerprint or config.name}\0{config.origin}\0{config.source}"
        return self.directory / f"{hashlib.sha256(where.encode()).hexdigest()[:32]}.json"

    def read(self, config: McpServerConfig) -> Offered | None:
        try:
            return msgspec.json.decode(self._path(config).read_bytes(), type=Offered)
        except (OSError, msgspec.ValidationError, msgspec.DecodeError):
            return None

    def write(self, config: McpServerConfig, offered: Offered) -> None:
        path = self._path(config)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".{path.name}.{os.getpid()}")
            temp.write_bytes(msgspec.json.encode(offered))
            os.replace(temp, path)
