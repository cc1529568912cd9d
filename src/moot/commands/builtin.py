"""The slash commands every front end has. Each is a small coroutine registered once, with its
name, arguments, description and completion: the basic ones here, the others in
`session.py` (model, permissions, context, undo, doctor, sandbox), `workspace.py` (the
session's tools: diff, map, symbols, grep, find, log, branch, commit, jobs, cancel),
`transcript.py` (export, copy, search, inspect) and `panes.py` (the app's side panes).
`!command` is `shell.py`."""

from __future__ import annotations

from collections.abc import Sequence

from moot.commands import cost, panes, session, sessions, transcript, verify, workspace
from moot.commands.files import add_file_commands
from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.protocol import ops

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
CYCLE = ("default", "acceptEdits", "plan")
"""The modes `shift+tab` cycles through (the others are chosen by name)."""


def next_mode(mode: str | None) -> str:
    """The mode after `mode` in the shift+tab cycle."""
    if mode not in CYCLE:
        return CYCLE[0]
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


def _complete_modes(context: CommandContext, typed: str) -> Sequence[str]:
    return [m for m in MODES if m.lower().startswith(typed.lower())]


def _complete_themes(context: CommandContext, typed: str) -> Sequence[str]:
    return [t for t in context.theme_names() if t.startswith(typed)]


def builtin_commands() -> Registry:
    """A registry holding the built-in commands."""
    registry = Registry()
    for command in COMMANDS:  # the basic ones, at the end of this module
        registry.add(command)
    cost.register(registry)
    session.register(registry)
    sessions.register(registry)
    workspace.register(registry)
    verify.register(registry)  # /lint, /test
    transcript.register(registry)
    panes.register(registry)  # /panes: the app's side panes (the REPL says it has none)

    add_file_commands(registry)  # /skills, /memory, /agents (moot.commands.files)
    from moot.commands.mcp import add_mcp_commands  # /mcp and the MCP servers' prompts

    add_mcp_commands(registry)
    return registry


async def _help(context: CommandContext, args: str) -> None:
    context.show_help()


async def _exit(context: CommandContext, args: str) -> None:
    context.exit()


async def _new(context: CommandContext, args: str) -> None:
    await context.new_session()


async def _mode(context: CommandContext, args: str) -> None:
    status = context.client.status()
    if not args:
        if status.mode is None:
            context.say("mode: none (no permission rules)")
            return
        # Cycles as shift+tab does: a front end without that key (an editor, a dumb
        # terminal) still has the one-step switch.
        # Says nothing itself: the switch shows as its `mode_changed`, as a named one does.
        following = next_mode(status.mode)
        context.client.submit(ops.SetMode(mode=following))  # type: ignore[arg-type]
        return
    chosen = next((m for m in MODES if m.lower() == args.lower()), None)
    if chosen is None:
        raise CommandError(f"no mode {args!r}; one of: {', '.join(MODES)}")
    context.client.submit(ops.SetMode(mode=chosen))  # type: ignore[arg-type]


async def _plan(context: CommandContext, args: str) -> None:
    context.client.submit(ops.SetMode(mode="plan"))


async def _status(context: CommandContext, args: str) -> None:
    s = context.client.status()
    lines = [
        f"session  {s.session_id}",
        f"workspace  {s.workspace}",
        f"model  {s.model}",
        f"mode  {s.mode or '-'}",
        f"sandbox  {s.sandbox.backend} ({s.sandbox.reason})",
        f"agents  {', '.join(a.name for a in s.agents)}",
        f"tools  {', '.join(s.tools)}",
    ]
    context.say("\n".join(lines))


async def _theme(context: CommandContext, args: str) -> None:
    names = list(context.theme_names())
    if not names:
        raise CommandError("this front end has no themes")
    if not args:
        now = context.theme
        labelled = [(n, f"{n}  (now)" if n == now else n) for n in names]
        chosen = await context.pick(f"theme (now {now})" if now else "theme", labelled)
        if chosen is None:
            return
        args = chosen
    context.set_theme(args)


COMMANDS = (
    Command("help", "Every command and key", _help, aliases=("?",)),
    Command("exit", "Quit moot (the session stays in the store)", _exit, aliases=("quit",)),
    Command("new", "Start a new session (this one stays in the store)", _new, aliases=("clear",)),
    Command(
        "mode",
        "Switch the permission mode; with no name, to the next (as shift+tab does)",
        _mode,
        arguments="[default|acceptEdits|plan|dontAsk|bypassPermissions]",
        complete=_complete_modes,
    ),
    Command("plan", "Switch to plan mode: explore, then present a plan to approve", _plan),
    Command("status", "The session: model, mode, sandbox, tools", _status),
    Command(
        "theme",
        "Switch the app's theme and remember it",
        _theme,
        arguments="[name]",
        complete=_complete_themes,
    ),
)
