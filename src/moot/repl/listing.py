"""What the REPL lists for the person: `/help` (every command and key) and the numbered list a
command that needs a choice shows, with what a typed answer picks from it, or narrows it to
(words typed to search, as the app's picker filters while typing)."""

from __future__ import annotations

from collections.abc import Sequence

from moot.commands.registry import Registry
from moot.repl.keys import KEYS
from moot.repl.paint import Paint, strip_escapes


def help_text(registry: Registry, paint: Paint) -> str:
    """Every command (arguments, description, aliases), then every key."""
    lines = [paint("commands", "bold")]
    for command in registry:
        name = f"/{command.name}" + (f" {command.arguments}" if command.arguments else "")
        also = f" (also /{', /'.join(command.aliases)})" if command.aliases else ""
        lines.append(f"  {name:<28} {command.description}{also}")
    lines.append(paint("keys", "bold"))
    lines += [f"  {k.key:<28} {k.description}" for k in KEYS]
    lines.append(f"  {'@path':<28} Name a file (Tab completes it)")
    return "\n".join(lines)


def numbered(title: str, choices: Sequence[tuple[str, str]], paint: Paint) -> str:
    """The choices' labels, numbered from 1 under the title (labels may quote the session)."""
    rows = [f"{number:>3}. {strip_escapes(label)}" for number, (_, label) in enumerate(choices, 1)]
    return "\n".join([paint(f"{title}:", "bold"), *rows])


def chosen(typed: str, choices: Sequence[tuple[str, str]]) -> str | None:
    """The value `typed` names: its number in the list, its value or its label (any case), or
    the one value it begins."""
    if not typed:
        return None
    if typed.isdigit() and 1 <= int(typed) <= len(choices):
        return choices[int(typed) - 1][0]
    lowered = typed.lower()
    for value, label in choices:
        if lowered in (value.lower(), label.lower()):
            return value
    starts = [value for value, _ in choices if value.lower().startswith(lowered)]
    return starts[0] if len(starts) == 1 else None


def matching(typed: str, choices: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The choices whose label or value holds every word of `typed` (any case): a search by
    title or id."""
    words = typed.lower().split()
    return [
        (value, label)
        for value, label in choices
        if words and all(w in f"{strip_escapes(label)} {value}".lower() for w in words)
    ]
