"""`!command`: the person runs a shell command through the session's sandbox (the `bash` tool,
as the person: `RunTool`), sees its output, and may send it with the next message."""

from __future__ import annotations

from moot.commands.answers import run_tool
from moot.commands.registry import CommandContext, CommandError
from moot.commands.show import fenced, show_result

MAX_OFFERED = 20_000
"""Characters of output offered for the next message at most (the tool caps it further)."""


def is_shell(text: str) -> bool:
    """A message is a shell command when it starts with `!` and a command (`!ls`, `! ls`)."""
    stripped = text.lstrip()
    return stripped.startswith("!") and bool(stripped[1:].strip())


async def run_shell(context: CommandContext, text: str) -> None:
    """Run the command of a `!command` line, show its output and offer it for the next message.

    Errors are told to the person, never raised.
    """
    command = text.lstrip()[1:].strip()
    try:
        result = await run_tool(context.client, "bash", {"command": command})
    except CommandError as exc:
        context.say(f"!{command}: {exc}", warning=True)
        return
    show_result(context, result)
    output = result.content[:MAX_OFFERED]
    block = f"I ran `{command}`:\n{fenced(output)}"
    context.offer(block, f"output of !{command}")
