"""A file change as a unified diff, capped: what the approval preview shows before an edit
(`moot.permissions.preview`) and what a finished edit's result carries for front ends
(`ToolResult.display["diff"]`), so the two read the same."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 200
"""Diff lines kept; a note says how many more there were."""
MAX_DIFF_CHARS = 4_000_000
"""Files larger than this (before and after together) get a note instead of a diff: difflib
is pure Python and would take seconds."""


def unified_diff(before: str | None, after: str, path: str) -> str:
    """The change from `before` (None: a new file) to `after` of `path`, capped.

    Every line ends with a newline, the last one included.
    """
    if len(before or "") + len(after) > MAX_DIFF_CHARS:
        return f"(no diff of {path}: too large to compare)\n"
    lines = list(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile="/dev/null" if before is None else f"a/{path}",
            tofile=f"b/{path}",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more diff lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
