"""Commands that run the session's own tools as the person (`RunTool`): the same workspace
bounds, sandbox and hidden files as the model's calls, and no model sees the results."""

from __future__ import annotations

from moot.commands.answers import run_tool
from moot.commands.registry import CommandContext, CommandError, Registry
from moot.commands.show import count, fenced, show_result, words

MAP_TOKENS = 1024
SOURCE_SUFFIXES = (".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs")


def register(registry: Registry) -> None:
    """Add the workspace commands to `registry`."""

    @registry.command("diff", "Uncommitted changes (staged and not)", arguments="[path]")
    async def diff(context: CommandContext, args: str) -> None:
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

    @registry.command(
        "map", "The repo map: the most used files and what they define", arguments="[tokens]"
    )
    async def map_(context: CommandContext, args: str) -> None:
        tokens = count(args, "the map's size in tokens", MAP_TOKENS, 64, 8192)
        show_result(context, await run_tool(context.client, "repo_map", {"tokens": tokens}))

    @registry.command(
        "symbols",
        "A file's definitions, or where a name is defined",
        arguments="[path|name]",
    )
    async def symbols(context: CommandContext, args: str) -> None:
        if not args:
            raise CommandError("/symbols PATH lists a file's definitions; /symbols NAME finds one")
        if args.endswith(SOURCE_SUFFIXES) or "/" in args:
            result = await run_tool(context.client, "outline", {"path": args})
        else:
            result = await run_tool(context.client, "symbols", {"name": args})
        show_result(context, result)

    @registry.command("grep", "Search the files for a pattern", arguments="PATTERN [path]")
    async def grep(context: CommandContext, args: str) -> None:
        found = words(args)
        if not found or len(found) > 2:
            raise CommandError("/grep PATTERN [path] (quote a pattern with spaces)")
        arguments = {"pattern": found[0], "path": found[1] if len(found) > 1 else "."}
        show_result(context, await run_tool(context.client, "grep", arguments))

    @registry.command("find", "Find files by glob pattern", arguments="PATTERN [path]")
    async def find(context: CommandContext, args: str) -> None:
        found = words(args)
        if not found or len(found) > 2:
            raise CommandError("/find PATTERN [path], e.g. /find '**/*.py' src")
        arguments = {"pattern": found[0], "path": found[1] if len(found) > 1 else "."}
        show_result(context, await run_tool(context.client, "glob", arguments))

    @registry.command("log", "Recent commits", arguments="[count] [path]")
    async def log(context: CommandContext, args: str) -> None:
        found = words(args)
        limit = 10
        if found and found[0].isdigit():
            limit = count(found.pop(0), "the number of commits", 10, 1, 200)
        if len(found) > 1:
            raise CommandError("/log [count] [path]")
        arguments = {"limit": limit, "path": found[0] if found else None}
        show_result(context, await run_tool(context.client, "git_log", arguments))

    @registry.command(
        "branch", "List branches, switch to one, or make one (-c)", arguments="[-c] [name]"
    )
    async def branch(context: CommandContext, args: str) -> None:
        found = words(args)
        create = "-c" in found
        names = [w for w in found if w != "-c"]
        if len(names) > 1 or (create and not names):
            raise CommandError("/branch lists; /branch NAME switches; /branch -c NAME makes one")
        arguments = {"name": names[0] if names else None, "create": create}
        show_result(context, await run_tool(context.client, "git_branch", arguments))

    @registry.command("commit", "Commit the files this session changed", arguments="MESSAGE")
    async def commit(context: CommandContext, args: str) -> None:
        if not args:
            raise CommandError("/commit MESSAGE (the files this session changed are committed)")
        show_result(context, await run_tool(context.client, "git_commit", {"message": args}))

    @registry.command("jobs", "The background shells and whether they still run")
    async def jobs(context: CommandContext, args: str) -> None:
        show_result(context, await run_tool(context.client, "jobs"))

    @registry.command("cancel", "Stop a background shell", arguments="ID")
    async def cancel(context: CommandContext, args: str) -> None:
        if not args or " " in args:
            raise CommandError("/cancel ID (/jobs lists the ids)")
        show_result(context, await run_tool(context.client, "kill_shell", {"shell_id": args}))
