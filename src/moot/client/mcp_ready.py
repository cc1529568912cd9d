"""Waiting for a session's MCP servers before its first model request.

The app and the REPL never wait: their first request carries the tools each server offered
last time (`moot.mcp.cache`), and a server's live list replaces them as it comes up. A run
that may be short and cannot be watched (`moot -p`, an editor's session, the SDK) waits
instead, so that a first run on a fresh machine sees the servers' tools and prompts; the
session still opens at once (nothing slow before the first request), and the wait overlaps
whatever the turn does before its request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.mcp.manager import McpManager


class ServersReady:
    """Waits once (however many calls ask) for the servers, at most `wait_s` seconds, and
    tells `tell` about each that was not ready by then.

    Args:
        manager: The session's MCP servers.
        wait_s: The bound (`moot.mcp.readiness.wait_seconds`).
        tell: Where what was not ready goes (stderr for `moot -p`, the editor's log).
    """

    def __init__(self, manager: McpManager, wait_s: float, tell: Callable[[str], None]) -> None:
        self.manager, self.wait_s, self.tell = manager, wait_s, tell
        self._waiting: asyncio.Future[None] | None = None

    async def __call__(self) -> None:
        if self._waiting is None:
            self._waiting = asyncio.ensure_future(self._wait())
        # Shielded: a call cancelled while it waits (an interrupt) leaves the wait to others.
        await asyncio.shield(self._waiting)

    async def _wait(self) -> None:
        for late in await self.manager.until_ready(self.wait_s):
            self.tell(late)


def servers_ready(
    manager: McpManager | None,
    tell: Callable[[str], None] | None,
    setting: float | None,
    environ: Mapping[str, str],
) -> ServersReady | None:
    """The wait a session's front end asked for (`SessionAssembly.mcp_late`), or None."""
    if manager is None or tell is None:
        return None
    from moot.mcp.readiness import wait_seconds

    return ServersReady(manager, wait_seconds(setting, environ), tell)
