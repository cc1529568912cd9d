"""How commands show what they got: a tool's result as a code block, errors as warnings."""

from __future__ import annotations

import re
import shlex

from moot.commands.registry import CommandContext, CommandError
from moot.protocol import events as ev

_FENCE = re.compile(r"`{3,}")


def fenced(text: str, language: str = "") -> str:
    """`text` as a markdown code block whose fence no line inside can close."""
    longest = max((len(m) for m in _FENCE.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def show_result(context: CommandContext, result: ev.ToolRan, language: str = "") -> None:
    """A tool's result: its text in a code block, or a warning when it failed."""
    if result.is_error:
        context.say(result.content, warning=True)
    elif result.content.strip():
        context.say(fenced(result.content, language), markdown=True)
    else:
        context.say(f"{result.tool}: nothing to show")


def words(args: str) -> list[str]:
    """A command's arguments split as a shell splits them (quotes group words).

    Raises:
        CommandError: An unclosed quote.
    """
    try:
        return shlex.split(args)
    except ValueError as exc:
        raise CommandError(f"cannot read the arguments: {exc}") from None


def count(text: str, what: str, default: int, low: int, high: int) -> int:
    """A whole number argument in `low..high`, or `default` when it is empty.

    Raises:
        CommandError: Not a number, or out of range (the message says what would do).
    """
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise CommandError(f"{what} is a number from {low} to {high}, not {text!r}") from None
    if not low <= value <= high:
        raise CommandError(f"{what} is a number from {low} to {high}")
    return value
