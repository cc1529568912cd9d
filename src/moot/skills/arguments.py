"""Filling in what the person typed after `/name`: `$ARGUMENTS`, and `$1`..`$9` in commands.

`$ARGUMENTS` is everything after the name, as typed. `$1`..`$9` are its words, split as a shell
would (`/fix "the login page" high` gives `$1` = `the login page`); a missing one is empty.
When the instructions name no placeholder at all, the arguments are added at the end, so
nothing the person typed is lost.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$(?:ARGUMENTS(?![A-Za-z0-9_])|([1-9])(?![0-9]))")
"""`$ARGUMENTS`, or `$1`..`$9` (group 1); one pass, so what the person typed is never itself
read as a placeholder."""


def substitute(template: str, arguments: str, *, positional: bool = False) -> str:
    """`template` with the person's `arguments` filled in (see the module docstring).

    Args:
        template: A skill's or command's instructions.
        arguments: What followed `/name`, stripped.
        positional: Also fill `$1`..`$9` (custom commands).
    """
    arguments = arguments.strip()
    words = split_words(arguments) if positional else []
    named = False

    def fill(match: re.Match[str]) -> str:
        nonlocal named
        if match.group(1) is None:
            named = True
            return arguments
        if not positional:
            return match.group(0)
        named = True
        index = int(match.group(1)) - 1
        return words[index] if index < len(words) else ""

    text = _PLACEHOLDER.sub(fill, template)
    if arguments and not named:
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text


def split_words(arguments: str) -> list[str]:
    """Words as a shell splits them; unbalanced quotes fall back to plain spaces."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()
