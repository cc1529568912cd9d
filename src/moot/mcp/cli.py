"""`moot mcp add | list | get | remove | approve`: the MCP servers of this workspace.

`add` writes the shape other agents read (`mcpServers` in `.moot/settings.local.json`, `.mcp.json`
or the user's settings); a server the person adds here is approved here at once. `list` and
`get` start the servers that may start (never one that waits for approval) to show their state
and what they offer; `remove` takes a server out of the file that defines it.
"""

from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from moot.mcp.approvals import Approvals
from moot.mcp.config import SERVERS_KEY, Scope, config_files, load_servers, parse_server, scope_file
from moot.mcp.files import ConfigFileError, read_object, write_object
from moot.mcp.names import valid_server_name
from moot.paths import workspace_root
from moot.protocol.mcp import McpServerStatus

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
CHECK_TIMEOUT_S = 30.0


def run_mcp_cli(options: Namespace) -> int:
    """Run one `moot mcp` action; errors are one line on stderr, never a traceback."""
    cwd = workspace_root(Path.cwd())
    try:
        match options.action:
            case "add":
                return _add(options, cwd)
            case "remove":
                return _remove(options, cwd)
            case "approve":
                return _approve(options.name, cwd)
            case "list":
                return asyncio.run(_list(cwd))
            case "get":
                return asyncio.run(_get(options.name, cwd))
    except ConfigFileError as exc:
        return _fail(str(exc))
    return _fail(f"unknown action {options.action!r}", EXIT_USAGE)


def _fail(message: str, code: int = EXIT_FAILED) -> int:
    print(f"moot: {message}", file=sys.stderr)
    return code


def _environ() -> dict[str, str]:
    """The environment a session here would have: the settings' `env` under the shell's."""
    import os

    from moot.settings import SettingsError, load_settings

    merged = dict(os.environ)
    try:
        settings_env = load_settings(workspace_root(Path.cwd())).env
    except SettingsError:
        return merged
    for name, value in settings_env.items():
        if not merged.get(name):
            merged[name] = value
    return merged


def _add(options: Namespace, cwd: Path) -> int:
    name: str = options.name
    if not valid_server_name(name):
        return _fail(f"{name!r}: a name holds only letters, digits, '_' and '-' (no '__')", 2)
    raw: dict[str, Any]
    if options.transport == "stdio":
        args = [a for a in options.args if a != "--"]
        raw = {"command": options.target, "args": args}
        if options.env:
            env = dict(item.partition("=")[::2] for item in options.env)
            if any(not key for key in env):
                return _fail("--env takes NAME=VALUE", EXIT_USAGE)
            raw["env"] = env
    else:
        raw = {"type": options.transport, "url": options.target}
        if options.header:
            headers = {}
            for item in options.header:
                key, sep, value = item.partition(":")
                if not sep or not key.strip():
                    return _fail("--header takes 'NAME: VALUE'", EXIT_USAGE)
                headers[key.strip()] = value.strip()
            raw["headers"] = headers
    scope: Scope = options.scope
    path = scope_file(scope, cwd)
    config = parse_server(
        name, raw, origin=_origin(scope), source=str(path), environ=_environ(), project=cwd
    )
    if config.problem and "is not set" not in config.problem:
        return _fail(f"{name}: {config.problem}", EXIT_USAGE)
    data = read_object(path) or {}
    servers = data.setdefault(SERVERS_KEY, {})
    if not isinstance(servers, dict):
        return _fail(f"{path}: {SERVERS_KEY} is not an object; fix it by hand")
    replaced = name in servers
    servers[name] = raw
    write_object(path, data)
    if scope == "local":
        from moot.settings import keep_out_of_git  # personal, as its name says

        keep_out_of_git(cwd, "/.moot/settings.local.json")
    if scope != "user":
        Approvals(cwd).approve(config)  # the person added it: no need to ask them again
    verb = "replaced" if replaced else "added"
    print(f"{verb} {name} ({config.shown()}) in {path}")
    if config.problem:
        print(f"moot: note: {config.problem}; set it before the server can start", file=sys.stderr)
    return EXIT_OK


def _origin(scope: Scope) -> Any:
    return {"user": "user", "project": "project", "local": "local"}[scope]


def _remove(options: Namespace, cwd: Path) -> int:
    name: str = options.name
    files = (
        [(scope_file(options.scope, cwd), options.scope)]
        if options.scope
        else [(path, origin) for path, origin in reversed(config_files(cwd))]
    )
    for path, _ in files:
        data = read_object(path)
        servers = data.get(SERVERS_KEY) if data else None
        if isinstance(servers, dict) and name in servers:
            del servers[name]
            assert data is not None
            write_object(path, data)
            Approvals(cwd).forget(name)
            print(f"removed {name} from {path}")
            return EXIT_OK
    return _fail(f"no MCP server {name!r} is defined here")


def _approve(name: str, cwd: Path) -> int:
    loaded = load_servers(cwd, _environ())
    config = loaded.servers.get(name)
    if config is None:
        return _fail(f"no MCP server {name!r} is defined here")
    if config.trusted:
        print(f"{name} is yours ({config.source}): it needs no approval")
        return EXIT_OK
    Approvals(cwd).approve(config)
    print(f"approved {name} ({config.shown()}, from {config.source}) for {cwd}")
    return EXIT_OK


async def _statuses(cwd: Path, only: str | None = None) -> list[McpServerStatus]:
    """Start what may start (never what waits for approval), wait for it, and report."""
    from moot.mcp.manager import McpManager
    from moot.paths import data_dir

    loaded = load_servers(cwd, _environ())
    if only is not None:
        loaded.servers = {k: v for k, v in loaded.servers.items() if k == only}
    for problem in loaded.problems:
        print(f"moot: {problem}", file=sys.stderr)
    manager = McpManager(
        loaded,
        Approvals(cwd),
        workspace=cwd,
        outputs_dir=data_dir() / "outputs" / "mcp-cli",
        environ=_environ(),
    )
    manager.start()
    try:
        await asyncio.gather(*(manager.wait_ready(n, CHECK_TIMEOUT_S) for n in loaded.servers))
        return manager.statuses()
    finally:
        await manager.close()


async def _list(cwd: Path) -> int:
    statuses = await _statuses(cwd)
    if not statuses:
        print("no MCP servers: add one with `moot mcp add NAME -- COMMAND [ARGS...]`")
        return EXIT_OK
    for status in statuses:
        print(f"{status.name}: {status.target} [{status.transport}, {_where(status)}]")
        print(f"  {_state_line(status)}")
    return EXIT_OK


def _where(status: McpServerStatus) -> str:
    return {"user": "your settings", "client": "the editor", "flag": "the command line"}.get(
        status.origin, status.source
    )


def _state_line(status: McpServerStatus) -> str:
    if status.state == "ready":
        line = f"ready: {len(status.tools)} tools"
        if status.prompts:
            line += f", {len(status.prompts)} prompts"
        if status.resources:
            line += f", {len(status.resources)} resources"
        return line
    if status.state == "needs_approval":
        return f"needs your approval before it starts: `moot mcp approve {status.name}`"
    return f"{status.state}" + (f": {status.error}" if status.error else "")


async def _get(name: str, cwd: Path) -> int:
    statuses = await _statuses(cwd, only=name)
    if not statuses:
        return _fail(f"no MCP server {name!r} is defined here")
    (status,) = statuses
    print(f"{status.name}")
    print(f"  {status.transport}: {status.target}")
    print(f"  defined in {_where(status)} ({status.origin})")
    print(f"  {_state_line(status)}")
    for tool in status.tools:
        print(f"  tool {tool.name}: {tool.description.splitlines()[0] if tool.description else ''}")
    for prompt in status.prompts:
        print(f"  prompt /{prompt.command} {' '.join(prompt.arguments)}".rstrip())
    for uri in status.resources:
        print(f"  resource @{status.name}:{uri}")
    return EXIT_OK
