"""Values shared by skills, memory, commands and agent definitions."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal

import msgspec

from moot.frontend.flags import split_rules

Source = Literal["shipped", "user", "project"]
"""Where a file came from: moot's own folder, the user's config dir, or the repository (which
may be hostile: what it asks for is never granted without the person)."""
Severity = Literal["error", "warning"]


class Problem(msgspec.Struct, frozen=True):
    """Something wrong with one file: an error leaves it out, a warning only says so."""

    path: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


def split_tools(value: object) -> tuple[list[str], str | None]:
    """Tool names or rules from frontmatter: a YAML list, or one string separated by spaces or
    commas outside parentheses (`Bash(git diff:*) Read`, `Read, Grep`).

    Returns:
        The rules as written, and what is wrong with the value (None when nothing is).
    """
    if isinstance(value, list):
        if not all(isinstance(item, str) for item in value):
            return [], "must be a list of strings"
        return [item.strip() for item in value if item.strip()], None
    if not isinstance(value, str):
        return [], "must be a string or a list of strings"
    return split_rules(value, ", \t\n"), None


def ignored_fields(fields: Collection[str], known: Sequence[str]) -> str | None:
    """What a file's frontmatter names that moot does not read, said as a warning; None when
    it names nothing else."""
    unknown = [key for key in fields if key not in known]
    if not unknown:
        return None
    return f"moot ignores {', '.join(f'`{k}`' for k in unknown)} (it reads: {', '.join(known)})"


def check_rules(rules: list[str], *, deep: bool = True) -> str | None:
    """What is wrong with the first malformed permission rule, or None.

    Args:
        rules: The rules as written.
        deep: Also compile `Bash(...)` specifiers. That loads the shell parser, which a
            session opening should not pay for: agent definitions are checked shallowly as
            they load, fully when first used (`moot.skills.policy.ToolLimit`) and by
            `moot skills validate`.
    """
    from moot.permissions.rules import parse_rule  # only files that name tools pay for it

    for rule in rules:
        name, paren, rest = rule.partition("(")
        try:
            if not deep and paren and name.strip() == "Bash":
                parse_rule(name)  # the name
                if not rest.endswith(")") or not rest[:-1].strip():
                    raise ValueError(f"rule {rule!r}: write Bash(command prefix)")
            else:
                parse_rule(rule)
        except ValueError as exc:
            return str(exc)
    return None
