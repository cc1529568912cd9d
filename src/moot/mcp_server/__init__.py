"""`moot mcp serve`: moot's workspace tools, and moot itself, for another agent over MCP (stdio).

The tools (read, grep, glob, ls, edit, write, the sandboxed shell, the repo map, git) run in a
session assembled like any other (`moot.client.assemble.open_session`: the settings' rules and
the command line's, the path policy, the sandbox), kept in memory: nothing of it lands in the
sessions database. `moot_task` opens real sessions through the client surface. The SDK (and
pydantic with it) is imported here, inside `run_serve`, never on moot's other paths.
"""

from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from moot.paths import workspace_root

if TYPE_CHECKING:
    from moot.client.local import SessionOptions
    from moot.client.session import Session

EXIT_USAGE = 2


def run_serve(options: Namespace) -> int:
    """Serve until the client closes stdin."""
    from moot.client.assemble import open_session
    from moot.client.errors import SetupError
    from moot.client.local import SessionOptions, read_denied_paths
    from moot.client.rules import session_rules
    from moot.client.session import SessionAssembly
    from moot.core.agent import Agent
    from moot.frontend.flags import project_mcp, rule_list
    from moot.paths import config_dir
    from moot.protocol.modes import PermissionMode
    from moot.settings import SettingsError, load_settings
    from moot.skills.guidance import load_guidance
    from moot.store.memory import MemoryStore

    cwd = workspace_root(Path.cwd())
    allowed, denied = rule_list(options.allowed_tools), rule_list(options.disallowed_tools)
    try:
        settings = load_settings(cwd)
        rules = session_rules(settings, allowed, denied)
        store = MemoryStore()
        session_id = store.create_session(title="moot mcp serve", workspace=str(cwd)).id
        mode = options.permission_mode
        # The skills and custom commands, served as prompts (`moot.mcp_server.offers`).
        denied_reads = read_denied_paths(rules, cwd)
        guidance = load_guidance(cwd, config_dir(), agent_names={"mcp-client"}, denied=denied_reads)
        assembly = SessionAssembly(
            settings=settings,
            # The tools' session has no model of its own: only `moot_task` runs an agent.
            agent=Agent("mcp-client", model=options.model or "none"),
            rules=rules,
            mode=PermissionMode(mode) if mode else None,
            guidance=guidance,
        )
        session = open_session(store, session_id, cwd, assembly)
    except (SetupError, SettingsError) as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def task_options() -> SessionOptions:
        return SessionOptions(
            cwd=cwd,
            model=options.model,
            permission_mode=mode,
            allowed_tools=allowed,
            disallowed_tools=denied,
            allow_project_mcp=project_mcp(options.allow_project_mcp),
        )

    try:
        ended_by = asyncio.run(_serve(session, task_options))
    except KeyboardInterrupt:
        return 130
    from moot.frontend.served import exit_status

    return exit_status(ended_by)


async def _serve(session: Session, task_options: Callable[[], SessionOptions]) -> int | None:
    """Serve until the client closes stdin (None) or a SIGTERM or SIGHUP ends moot (its
    number); either way the session closes, and what it started ends."""
    # The SDK loads here: `moot mcp serve` is the one command that needs it in this process.
    from mcp.server.stdio import stdio_server

    from moot.frontend.served import serve_until_ended, stdin_lines, stdout_writer
    from moot.mcp_server.server import build_server
    from moot.mcp_server.tools import WorkspaceTools

    server = build_server(WorkspaceTools(session), task_options)

    async def serving() -> None:
        # Read and written on the loop: the SDK's threads would hold the end until the
        # client's next line, or for good when it reads nothing.
        lines, wire = await stdin_lines(), await stdout_writer()
        async with stdio_server(stdin=lines, stdout=wire) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())

    return await serve_until_ended(serving(), session.close)
