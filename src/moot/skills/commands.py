"""Custom slash commands: markdown files in `.moot/commands/` and the user's `commands/`.

`.moot/commands/review.md` is `/review`; a file in a subfolder, `.moot/commands/db/migrate.md`,
is `/db:migrate`. The closest file of a name wins, as for skills (`moot.skills.places`). The
frontmatter is optional:

```
---
description: Review a file for bugs          # shown in completion; else the body's first line
argument-hint: <path>
allowed-tools: Bash(git diff:*) Read         # pre-approved while the command's turn runs
---
Review @$1 for bugs. Focus on $ARGUMENTS.
```

The body is the prompt: `$ARGUMENTS` and `$1`..`$9` are filled in (`moot.skills.arguments`),
then every `@path` names a workspace file whose text is included below the prompt (capped, and
never from outside the workspace).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from moot.skills.arguments import substitute
from moot.skills.files import Denied, FileRefused, folder_entries, is_dir, read_text
from moot.skills.frontmatter import FrontmatterError, split_document
from moot.skills.memory import imports_in
from moot.skills.places import Places
from moot.skills.values import Problem, Source, check_rules, ignored_fields, split_tools

MAX_COMMAND_BYTES = 64 * 1024
MAX_INCLUDE_BYTES = 64 * 1024
"""One `@path` file included in a command, at most."""
MAX_INCLUDED_BYTES = 256 * 1024
"""All the files one command includes, at most."""
MAX_DEPTH = 3
"""Subfolders looked into below `commands/`."""
KNOWN_FIELDS = ("description", "argument-hint", "allowed-tools", "model")
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


class CustomCommand(msgspec.Struct, frozen=True, kw_only=True):
    """One command file."""

    name: str
    description: str
    body: str
    path: str
    source: Source
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str = ""
    """A model for the command's turn (`provider/model`); empty: the session's."""


def discover_commands(places: Places) -> tuple[dict[str, CustomCommand], list[Problem]]:
    """Every command `places` hold; the closest of each name wins, the others are reported."""
    found: dict[str, CustomCommand] = {}
    problems: list[Problem] = []
    for place in places.folders("commands"):
        for path, name in _command_files(place.root, place.folder, problems):
            command, issues = load_command(
                place.root, path, name, place.source, denied=places.denied
            )
            problems += issues
            if command is None:
                continue
            if name in found:
                problems.append(Problem(str(path), f"shadowed by {found[name].path}", "warning"))
            else:
                found[name] = command
    return found, problems


def _command_files(
    root: Path, folder: Path, problems: list[Problem], prefix: str = "", depth: int = 0
) -> list[tuple[Path, str]]:
    files: list[tuple[Path, str]] = []
    for path in folder_entries(root, folder, problems):
        if path.name.startswith("."):
            continue
        stem = path.name.removesuffix(".md")
        if is_dir(path):
            if depth < MAX_DEPTH and _SEGMENT.fullmatch(path.name):
                files += _command_files(root, path, problems, f"{prefix}{path.name}:", depth + 1)
        elif path.name.endswith(".md"):
            if _SEGMENT.fullmatch(stem):
                files.append((path, prefix + stem))
            else:
                problems.append(
                    Problem(str(path), "a command's file name is letters, digits, - and _")
                )
    return files


def load_command(
    root: Path, path: Path, name: str, source: Source, *, denied: Denied | None = None
) -> tuple[CustomCommand | None, list[Problem]]:
    """Read and check one command file; never raises for a bad file."""
    try:
        text, _, _ = read_text(root, path, cap=MAX_COMMAND_BYTES, denied=denied)
        fields, body = split_document(text)
    except (FileRefused, FrontmatterError, OSError) as exc:
        return None, [Problem(str(path), getattr(exc, "why", None) or str(exc))]
    fields = fields or {}
    errors: list[str] = []
    values: dict[str, object] = {}
    for key in ("description", "argument-hint", "model"):
        if key in fields:
            if isinstance(fields[key], str):
                values[key.replace("-", "_")] = fields[key].strip()
            else:
                errors.append(f"`{key}` must be a string")
    if "allowed-tools" in fields:
        rules, wrong = split_tools(fields["allowed-tools"])
        wrong = wrong or check_rules(rules)
        if wrong:
            errors.append(f"`allowed-tools` {wrong}")
        else:
            values["allowed_tools"] = tuple(rules)
    if not body.strip():
        errors.append("the prompt after the frontmatter is empty")
    problems = [Problem(str(path), message) for message in errors]
    if ignored := ignored_fields(fields, KNOWN_FIELDS):
        problems.append(Problem(str(path), ignored, "warning"))
    if errors:
        return None, problems
    description = str(values.pop("description", "")) or _first_line(body)
    command = CustomCommand(
        name=name,
        description=description,
        body=body.strip("\n"),
        path=str(path),
        source=source,
        **values,  # type: ignore[arg-type]
    )
    return command, problems


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= 80 else line[:79] + "…"
    return ""


def expand_command(
    command: CustomCommand, arguments: str, workspace: Path, *, denied: Denied | None = None
) -> str:
    """The prompt `command` makes of `arguments`: placeholders filled, `@path` files included.

    Args:
        command: The command.
        arguments: What followed `/name`.
        workspace: The real path of the workspace root; included files must lie inside it.
        denied: The person's `Read(...)` deny rules: a file they cover is not included.
    """
    prompt = substitute(command.body, arguments, positional=True)
    included: list[str] = []
    budget = MAX_INCLUDED_BYTES
    for target in imports_in(prompt):
        path = workspace / target
        if not path.is_file() and not path.is_symlink():
            continue  # prose, or a file that is not there
        try:
            cap = min(MAX_INCLUDE_BYTES, budget)
            text, cut, _ = read_text(workspace, path, cap=cap, cut=True, denied=denied)
        except (FileRefused, OSError) as exc:
            included.append(f"[moot: @{target} is not included: {getattr(exc, 'why', exc)}]")
            continue
        budget -= len(text.encode())
        note = "\n[moot: cut here: the file is longer]" if cut else ""
        included.append(f'<file path="{target}">\n{text.rstrip()}{note}\n</file>')
        if budget <= 0:
            included.append(
                "[moot: no more files included: the command's files reached "
                f"{MAX_INCLUDED_BYTES // 1024} KiB]"
            )
            break
    if included:
        prompt = f"{prompt.rstrip()}\n\nFiles included with @:\n\n" + "\n\n".join(included)
    return prompt
