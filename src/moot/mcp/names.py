"""The names MCP tools and prompts go by in moot: `mcp__<server>__<tool>`.

Providers accept tool names of 1-64 letters, digits, `_` and `-`, so a server's or a tool's name
is made of those (anything else becomes `_`), and a name too long keeps its head and a short
digest of the whole, so two long names stay apart and the same name always maps the same way.
Rules name tools the same way (`mcp__github__*`), and so do prompt commands
(`/mcp__github__review`).
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def safe_part(text: str) -> str:
    """A server's or tool's name with what providers refuse replaced by `_`."""
    return _UNSAFE.sub("_", text) or "_"


def qualified(server: str, item: str) -> str:
    """The name a model (or a slash command) uses for a server's tool or prompt."""
    name = f"{PREFIX}{safe_part(server)}{SEPARATOR}{safe_part(item)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def valid_server_name(name: str) -> bool:
    """Whether `name` may name a server: letters, digits, `_` and `-`, without `__` (which
    separates the server from the tool in a tool's name)."""
    return bool(name) and not _UNSAFE.search(name) and SEPARATOR not in name
