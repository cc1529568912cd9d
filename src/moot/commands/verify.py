"""`/lint` and `/test`: the person runs the project's linters or tests (the `lint` and `test`
tools, as the person: `RunTool`), sees what they found, and hands the failures to the model
with one key: they are offered for the next message (`CommandContext.offer`), so Enter sends
them (the app puts them in the prompt as a chip; the REPL sends them on an empty line)."""

from __future__ import annotations

from moot.commands.answers import run_tool
from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.commands.show import show_result, words


def register(registry: Registry) -> None:
    """Add `/lint` and `/test` to `registry`."""
    for command in COMMANDS:
        registry.add(command)


def arguments(kind: str, args: str) -> dict[str, str | None]:
    """The tool's arguments from `/lint [path]` or `/test [path] [-k pattern]`.

    Raises:
        CommandError: More than a path (and, for `/test`, a `-k` pattern).
    """
    given = words(args)
    found: dict[str, str | None] = {"path": None}
    if kind == "test":
        found["filter"] = None
        if "-k" in given:
            at = given.index("-k")
            if at + 1 >= len(given):
                raise CommandError("/test -k needs a test-name pattern")
            found["filter"] = given[at + 1]
            del given[at : at + 2]
    if len(given) > 1:
        usage = "/lint [path]" if kind == "lint" else "/test [path] [-k pattern]"
        raise CommandError(f"one path at most: {usage}")
    found["path"] = given[0] if given else None
    return found


async def run_checks(context: CommandContext, kind: str, args: str) -> None:
    """Run `kind` (`lint` or `test`) as the person, show it, and offer its failures."""
    result = await run_tool(context.client, kind, arguments(kind, args))
    show_result(context, result)
    failures = result.display.get("failures")
    if isinstance(failures, str) and failures:
        context.offer(failures, f"output of /{kind}")  # the front end says how it goes
    elif not result.is_error:
        context.say(f"/{kind}: all clear")


async def _lint(context: CommandContext, args: str) -> None:
    await run_checks(context, "lint", args)


async def _test(context: CommandContext, args: str) -> None:
    await run_checks(context, "test", args)


COMMANDS = (
    Command("lint", "Run the project's linters; Enter then sends the findings", _lint,
            arguments="[path]"),
    Command("test", "Run the project's tests; Enter then sends the failures", _test,
            arguments="[path] [-k pattern]"),
)  # fmt: skip
