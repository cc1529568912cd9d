"""`moot acp`: moot as an Agent Client Protocol agent on stdio, for editors (Zed, Toad, ...).

A front end like the app: it holds the client surface (`moot.client`, `moot.protocol`,
`moot.commands`) and nothing else of the runtime. The SDK (`agent-client-protocol`, pydantic
with it) is imported here, inside `run_acp`, never on moot's other paths.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moot.client.local import SessionOptions

EXIT_USAGE = 2


def run_acp(options: Namespace) -> int:
    """Serve one editor on stdin/stdout until it closes the connection."""
    from moot.frontend.served import exit_status, stdio_problem

    if problem := stdio_problem():
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
    if sys.stdout.closed:  # the SDK closed it as its client went away: nothing is left to say
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the process's stdout from now on
    return exit_status(ended_by)


async def _serve(defaults: SessionOptions) -> int | None:
    """Serve until the editor closes the connection (None) or a SIGTERM or SIGHUP ends moot
    (its number); either way the sessions close, and what they started ends."""
    from acp import run_agent

    from moot.acp.agent import MootAgent
    from moot.acp.wire import BriefNotificationErrors, stdio_transport
    from moot.frontend.served import serve_until_ended

    agent = MootAgent(defaults)
    # moot's own reader and writer on pipes (`moot.acp.wire`); on a terminal, the SDK's.
    transport = await stdio_transport()
    serving = run_agent(agent, transport) if transport else run_agent(agent)  # type: ignore[arg-type]
    brief = BriefNotificationErrors()
    logging.getLogger().addFilter(brief)  # the SDK logs to the root logger
    try:
        return await serve_until_ended(serving, agent.close)
    finally:
        logging.getLogger().removeFilter(brief)
