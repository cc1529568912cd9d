"""Commands that run the session's own tools as the person (`RunTool`): the same workspace
bounds, sandbox and hidden files as the model's calls, and no model sees the results."""

from __future__ import annotations

from moot.commands.answers import run_tool
from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.commands.show import count, fenced, show_result, words

MAP_TOKENS = 1024
SOURCE_SUFFIXES = (".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs")


def register(registry: Registry) -> None:
    """Add the workspace commands (`COMMANDS`, at the end of this module) to `registry`."""
    for command in COMMANDS:
        registry.add(command)


async def _diff(context: CommandContext, args: str) -> None:
    path = args or None
    shown = False
    for staged in (False, True):
        result = await run_tool(context.client, "git_diff", {"path": path, "staged": staged})
        text = result.display.get("diff")
        if result.is_error:
            raise CommandError(result.content)
        if isinstance(text, str) and text:
            title = "staged" if staged else "not staged"
            context.say(f"{title}:\n{fenced(text, 'diff')}", markdown=True)
            shown = True
    # New files are changes too, though git diff shows none of them until they are added.
    status = await run_tool(context.client, "git_status")
    untracked = status.display.get("untracked") if not status.is_error else None
    if isinstance(untracked, list) and (
        new := [f for f in untracked if not path or f == path or f.startswith(f"{path}/")]
    ):
        context.say(f"untracked (new, not in git yet): {', '.join(new)}")
        shown = True
    if not shown:
        context.say(f"no uncommitted changes{f' in {path}' if path else ''}")


async def _map(context: CommandContext, args: str) -> None:
    tokens = count(args, "the map's size in tokens", MAP_TOKENS, 64, 8192)
    show_result(context, await run_tool(context.client, "repo_map", {"tokens": tokens}))


async def _symbols(context: CommandContext, args: str) -> None:
    if not args:
        raise CommandError("/symbols PATH lists a file's definitions; /symbols NAME finds one")
    if args.endswith(SOURCE_SUFFIXES) or "/" in args:
        result = await run_tool(context.client, "outline", {"path": args})
    else:
        result = await run_tool(context.client, "symbols", {"name": args})
    show_result(context, result)


async def _grep(context: CommandContext, args: str) -> None:
    found = words(args)
    if not found or len(found) > 2:
        raise CommandError("/grep PATTERN [path] (quote a pattern with spaces)")
    arguments = {"pattern": found[0], "path": found[1] if len(found) > 1 else "."}
    show_result(context, await run_tool(context.client, "grep", arguments))


async def _find(context: CommandContext, args: str) -> None:
    found = words(args)
    if not found or len(found) > 2:
        raise CommandError("/find PATTERN [path], e.g. /find '**/*.py' src")
    arguments = {"pattern": found[0], "path": found[1] if len(found) > 1 else "."}
    show_result(context, await run_tool(context.client, "glob", arguments))


async def _log(context: CommandContext, args: str) -> None:
    found = words(args)
    limit = 10
    if found and found[0].isdigit():
        limit = count(found.pop(0), "the number of commits", 10, 1, 200)
    if len(found) > 1:
        raise CommandError("/log [count] [path]")
    arguments = {"limit": limit, "path": found[0] if found else None}
    show_result(context, await run_tool(context.client, "git_log", arguments))


async def _branch(context: CommandContext, args: str) -> None:
    found = words(args)
    create = "-c" in found
    names = [w for w in found if w != "-c"]
    if len(names) > 1 or (create and not names):
        raise CommandError("/branch lists; /branch NAME switches; /branch -c NAME makes one")
    arguments = {"name": names[0] if names else None, "create": create}
    show_result(context, await run_tool(context.client, "git_branch", arguments))


async def _commit(context: CommandContext, args: str) -> None:
    if not args:
        raise CommandError("/commit MESSAGE (the files this session changed are committed)")
    show_result(context, await run_tool(context.client, "git_commit", {"message": args}))


async def _jobs(context: CommandContext, args: str) -> None:
    show_result(context, await run_tool(context.client, "jobs"))


async def _cancel(context: CommandContext, args: str) -> None:
    if not args or " " in args:
        raise CommandError("/cancel ID (/jobs lists the ids)")
    show_result(context, await run_tool(context.client, "kill_shell", {"shell_id": args}))


async def _diagnostics(context: CommandContext, args: str) -> None:
    arguments = {"path": args} if args else {}
    show_result(context, await run_tool(context.client, "diagnostics", arguments))


COMMANDS = (
    Command("diff", "Uncommitted changes (staged and not)", _diff, arguments="[path]"),
    Command(
        "map", "The repo map: the most used files and what they define", _map, arguments="[tokens]"
    ),
    Command(
        "symbols",
        "A file's definitions, or where a name is defined",
        _symbols,
        arguments="[path|name]",
    ),
    Command("grep", "Search the files for a pattern", _grep, arguments="PATTERN [path]"),
    Command("find", "Find files by glob pattern", _find, arguments="PATTERN [path]"),
    Command("log", "Recent commits", _log, arguments="[count] [path]"),
    Command(
        "branch", "List branches, switch to one, or make one (-c)", _branch, arguments="[-c] [name]"
    ),
    Command("commit", "Commit the files this session changed", _commit, arguments="MESSAGE"),
    Command(
        "diagnostics",
        "Errors and warnings from language servers: a file, or the files changed",
        _diagnostics,
        arguments="[path]",
    ),
    Command("jobs", "The background shells and whether they still run", _jobs),
    Command("cancel", "Stop a background shell", _cancel, arguments="ID"),
)
