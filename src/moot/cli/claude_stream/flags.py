"""The flags Claude Code's scripts and Agent SDKs pass, read with their meanings where moot has
the capability, and refused by name where it has not: never silently ignored."""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path
from typing import Any

from moot.protocol.mcp import McpServerConfig

REFUSED: dict[str, tuple[str, str]] = {
    "betas": ("--betas", "moot's providers choose their own API features"),
    "task_budget": ("--task-budget", "use --max-budget-usd or --max-turns"),
    "resume_session_at": ("--resume-session-at", "fork at an event: moot sessions fork --at"),
    "resume_drops_turn": ("--resume-drops-turn", "moot never drops a recorded turn"),
    "session_mirror": ("--session-mirror", "moot's sessions live in its own store"),
    "plugin_dir": ("--plugin-dir", "moot has skills and MCP servers, not plugins"),
    "thinking": ("--thinking", "use --effort"),
    "max_thinking_tokens": ("--max-thinking-tokens", "use --effort"),
    "thinking_display": ("--thinking-display", "moot always records thinking as given"),
    "include_hook_events": ("--include-hook-events", "--output-format events has them"),
}
"""Flags moot reads only to refuse: the option's name, and what to do instead."""

SETTING_SOURCES = frozenset({"user", "project", "local"})
"""The settings files `--setting-sources` may name (moot's user, project and local files)."""

EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}
"""Claude Code's `--effort` levels as moot's `MOOT_REASONING_EFFORT`."""

CLAUDE_TOOLS = {
    "Bash": "bash",
    "BashOutput": "shell_output",
    "KillShell": "kill_shell",
    "KillBash": "kill_shell",
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "multi_edit",
    "Glob": "glob",
    "Grep": "grep",
    "LS": "ls",
    "WebFetch": "web_fetch",
    "TodoWrite": "todo",
    "Task": "call_agent",
    "Agent": "call_agent",
    "Skill": "skill",
    "ExitPlanMode": "exit_plan_mode",
}
"""Claude Code's tool names, as moot's tools are named."""


class FlagError(ValueError):
    """A flag moot cannot honour, with the flag's name in the message."""


def refused(options: Namespace) -> str:
    """Why the options cannot run (the first flag moot does not support), or ""."""
    for field, (flag, instead) in REFUSED.items():
        value = getattr(options, field, None)
        if value not in (None, False, []):
            return f"{flag} is not supported: {instead}"
    sources = getattr(options, "setting_sources", None)
    if sources is not None and (unknown := set(_names(sources)) - SETTING_SOURCES):
        return f"--setting-sources: no source {', '.join(sorted(unknown))} (user, project, local)"
    streamed = getattr(options, "input_format", "text") == "stream-json"
    if streamed and (options.output_format != "stream-json" or options.prompt is not None):
        return (
            "--input-format stream-json takes its messages on stdin, with --output-format "
            "stream-json and no -p task"
        )
    if getattr(options, "replay_user_messages", False) and not streamed:
        return "--replay-user-messages echoes --input-format stream-json's messages"
    tool = getattr(options, "permission_prompt_tool", None)
    if tool is not None and (tool != "stdio" or not streamed):
        return (
            f"--permission-prompt-tool {tool!r} is not supported: moot asks 'stdio' only, the "
            "Agent SDK's can_use_tool over --input-format stream-json"
        )
    effort = getattr(options, "effort", None)
    if effort is not None and effort not in EFFORTS:
        return f"--effort {effort!r}: one of {', '.join(EFFORTS)}"
    return ""


def _names(value: str) -> list[str]:
    return [n.strip() for n in value.replace(" ", ",").split(",") if n.strip()]


def tool_names(value: str | None) -> tuple[str, ...] | None:
    """`--tools`: the tools the agent is offered, by moot's names (None or `default`: all;
    "": none). Whether each exists is `unknown_tools`'s to say, once the session is open."""
    if value is None or value.strip() == "default":
        return None
    return tuple(CLAUDE_TOOLS.get(name, name) for name in _names(value))


def system_prompt(options: Namespace) -> str | None:
    """`--system-prompt` or `--system-prompt-file`'s text; None: moot's own.

    Raises:
        FlagError: The file cannot be read.
    """
    if options.system_prompt_file is not None:
        try:
            return Path(options.system_prompt_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise FlagError(f"--system-prompt-file: {exc}") from None
    return options.system_prompt


def mcp_servers(values: list[str]) -> tuple[list[McpServerConfig], dict[str, Any]]:
    """`--mcp-config` (each a file or JSON, `{"mcpServers": {...}}`): the servers moot starts,
    and the SDK's in-process servers (`type: sdk`) by name, which the control protocol serves.

    Raises:
        FlagError: A file that cannot be read, JSON that does not parse, a server of no kind
            moot knows.
    """
    servers: list[McpServerConfig] = []
    in_process: dict[str, Any] = {}
    for value in values:
        text = value
        if not value.lstrip().startswith("{"):
            try:
                text = Path(value).read_text(encoding="utf-8")
            except OSError as exc:
                raise FlagError(f"--mcp-config: {exc}") from None
        try:
            body = json.loads(text)
        except ValueError as exc:
            raise FlagError(f"--mcp-config: not JSON ({exc})") from None
        for name, spec in (body.get("mcpServers") or {}).items():
            if spec.get("type") == "sdk":
                in_process[name] = spec
            else:
                servers.append(_server(name, spec))
    return servers, in_process


def _server(name: str, spec: dict[str, Any]) -> McpServerConfig:
    kind = spec.get("type") or ("stdio" if "command" in spec else "")
    if kind == "stdio":
        return McpServerConfig(
            name=name,
            transport="stdio",
            command=spec["command"],
            args=tuple(spec.get("args") or ()),
            env=dict(spec.get("env") or {}),
            origin="flag",
            source="--mcp-config",
        )
    if kind in ("http", "sse"):
        return McpServerConfig(
            name=name,
            transport="http" if kind == "http" else "sse",
            url=spec["url"],
            headers=dict(spec.get("headers") or {}),
            origin="flag",
            source="--mcp-config",
        )
    raise FlagError(f"--mcp-config: server {name!r} is of no kind moot knows ({kind!r})")


def session_choices(options: Namespace) -> dict[str, Any]:
    """What Claude Code's flags choose about the session (`SessionOptions` fields).

    Raises:
        FlagError: A flag moot does not support, or a value it cannot use; the message names
            the flag.
    """
    if problem := refused(options):
        raise FlagError(problem)
    if getattr(options, "input_format", "text") == "stream-json":
        from moot.cli.claude_stream.opening import first_line, take_initialize

        take_initialize(options, first_line())
    if options.fallback_model:
        if not options.model:
            raise FlagError("--fallback-model needs --model (or MOOT_MODEL) to fall back from")
        # moot's fallback router: a comma-separated list, tried in order.
        options.model = f"{options.model},{options.fallback_model}"
    servers, in_process = mcp_servers(options.mcp_config)
    if in_process and getattr(options, "input_format", "text") != "stream-json":
        names = ", ".join(in_process)
        raise FlagError(
            f"--mcp-config: in-process SDK servers ({names}) need --input-format "
            "stream-json, whose control protocol serves them"
        )
    schema = None
    if options.json_schema is not None:
        try:
            schema = json.loads(options.json_schema)
        except ValueError as exc:
            raise FlagError(f"--json-schema: not JSON ({exc})") from None
    if options.fork_session:
        options.resume = forked(options.resume)
    sources = getattr(options, "setting_sources", None)
    choices: dict[str, Any] = {
        "new_session_id": session_id(options),
        "answer_schema": schema,
        "strict_mcp": options.strict_mcp_config,
        "tools": tool_names(options.tools),
        "max_cost_usd": options.max_budget_usd,
        "system_prompt": system_prompt(options),
        "append_system_prompt": options.append_system_prompt,
        "mcp_servers": servers,
        "settings": options.settings,
        "add_dirs": tuple(options.add_dir),
        "setting_sources": None if sources is None else _names(sources),
    }
    if getattr(options, "input_format", "text") == "stream-json":
        from moot.cli.claude_stream.hooks import SdkHooks

        # The hooks are registered by the SDK's `initialize`, the Python SDK's tools listed
        # while it waits; the stream session finds both on the options.
        choices["hook_callbacks"] = options.sdk_hooks = SdkHooks()
        from moot.cli.claude_stream.sdk_tools import SdkTools

        sdk_names = [*in_process, *getattr(options, "sdk_servers", ())]
        manifests = getattr(options, "sdk_manifests", {})
        choices["client_tools"] = options.sdk_tools = SdkTools(sdk_names, manifests)
    return choices


def unknown_tools(given: tuple[str, ...] | None, offered: tuple[str, ...]) -> str:
    """Why `--tools` names a tool the session does not have, or ""."""
    there = {*offered, "call_agent"}
    unknown = [n for n in given or () if n not in there and not n.startswith("mcp__")]
    if not unknown:
        return ""
    return f"--tools: moot has no tool {', '.join(unknown)} (there are: {', '.join(sorted(there))})"


def forked(session_id: str | None) -> str:
    """`--fork-session`: a fork of the session `--resume` names, to go on in.

    Raises:
        FlagError: No session named, or no such session.
    """
    if not session_id:
        raise FlagError("--fork-session needs --resume SESSION (or -c): the session to fork")
    from moot.client.errors import StoreError
    from moot.client.stored import open_upkeep

    try:
        upkeep = open_upkeep()
    except StoreError as exc:
        raise FlagError(f"--fork-session: {exc}") from None
    try:
        return upkeep.fork(session_id)
    except (KeyError, StoreError) as exc:
        raise FlagError(f"--fork-session: {exc.args[0] if exc.args else exc}") from None
    finally:
        upkeep.close()


def session_id(options: Namespace) -> str | None:
    """`--session-id`: the id a new session takes, a UUID (as Claude Code's) or a `ses_` id.

    Raises:
        FlagError: Not such an id, or given with --resume or --continue.
    """
    wanted = options.session_id
    if wanted is None:
        return None
    if options.resume is not None or options.continue_:
        raise FlagError("--session-id names a new session; --resume goes on with one")
    if not wanted.startswith("ses_"):
        import uuid

        try:
            uuid.UUID(wanted)
        except ValueError:
            raise FlagError(f"--session-id {wanted!r}: a UUID or a ses_ id") from None
    return str(wanted)
