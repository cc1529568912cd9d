"""`moot acp`: moot as an Agent Client Protocol agent on stdio, for editors (Zed, Toad, ...).

A front end like the app: it holds the client surface (`moot.client`, `moot.protocol`,
`moot.commands`) and nothing else of the runtime. The SDK (`agent-client-protocol`, pydantic
with it) is imported here, inside `run_acp`, never on moot's other paths.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.client.local import SessionOptions

EXIT_OK = 0
EXIT_USAGE = 2


def run_acp(options: Namespace) -> int:
    """Serve one editor on stdin/stdout until it closes the connection."""
    if problem := _stdio_problem():
        print(f"moot acp: {problem}; an editor starts it with pipes", file=sys.stderr)
        return EXIT_USAGE
    from moot.client.local import SessionOptions
    from moot.frontend.flags import project_mcp, rule_list

    defaults = SessionOptions(
        cwd=Path.cwd(),
        model=options.model,
        permission_mode=options.permission_mode,
        allowed_tools=rule_list(options.allowed_tools),
        disallowed_tools=rule_list(options.disallowed_tools),
        allow_project_mcp=project_mcp(options.allow_project_mcp),
    )
    try:
        ended_by = asyncio.run(_serve(defaults))
    except KeyboardInterrupt:
        return 130
    return 128 + ended_by if ended_by else EXIT_OK


def _stdio_problem() -> str | None:
    """Why stdin and stdout cannot carry the protocol, if they cannot: the event loop reads and
    writes only pipes, sockets and terminals (stdin from `/dev/null` hung for good, from a file
    ended in a traceback)."""
    for name, fd, devices in (("standard input", 0, False), ("standard output", 1, True)):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return f"{name} is closed"
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd):
            continue
        if devices and stat.S_ISCHR(mode):
            continue  # written to as a pipe is (`/dev/null`)
        return f"{name} is a file, not a pipe"
    return None


async def _serve(defaults: SessionOptions) -> int | None:
    """Serve until the editor closes the connection (None) or a SIGTERM or SIGHUP ends moot
    (its number); either way the sessions close, and what they started ends."""
    from acp import run_agent

    from moot.acp.agent import MootAgent
    from moot.frontend.served import ended_by_signals

    agent = MootAgent(defaults)
    with ended_by_signals() as taken:
        try:
            await run_agent(agent)  # type: ignore[arg-type]
        except asyncio.CancelledError:
            if not taken:
                raise
        finally:
            await agent.close()
    return taken[0] if taken else None
