"""What the person sees before approving a file change: a unified diff of it.

The change is applied in memory to the file as it is now (the same exact-match rules the
`edit` tools use, simplified: the first occurrence, or all with `replace_all`); nothing is
written. A file that cannot be read or an `old` text that is not found gives a short note
instead, and the tool itself reports the real error when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moot.workspace.diff import unified_diff
from moot.workspace.paths import PathRefused, Workspace, read_file_bytes


def diff_preview(root: Path, tool: str, args: Mapping[str, Any]) -> str | None:
    """A unified diff for write, edit and multi_edit calls; None for other tools."""
    if tool not in ("write", "edit", "multi_edit") or not isinstance(args.get("path"), str):
        return None
    path = args["path"]
    try:
        target = Workspace(root).resolve_read(path)
        before = read_file_bytes(root, target)[0].decode("utf-8", "replace")
    except FileNotFoundError:
        before = None
    except (OSError, PathRefused) as exc:
        return f"(no preview of {path}: {exc})"
    after = _apply(tool, args, before or "")
    if after is None:
        return f"(no preview of {path}: the text to replace is not in the file as it is now)"
    return unified_diff(before, after, path)


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
