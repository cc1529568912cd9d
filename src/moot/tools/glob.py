"""The `glob` tool: files whose path matches a pattern, newest first.

Patterns read like .gitignore lines (see `moot.workspace.ignore`): `*.py` matches at any
depth, `src/**/*.ts` from the directory searched. Ignored files and `.git` are skipped.
"""

from __future__ import annotations

import os

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.ignore import GlobPattern
from moot.workspace.paths import Workspace
from moot.workspace.walk import below, walk_files

MAX_FILES = 200


def glob_tool(workspace: Workspace) -> FunctionTool:
    """The `glob` tool, bound to `workspace`."""

    @tool(
        name="glob",
        side_effect=SideEffect.READ_ONLY,
        description="Find files by glob (e.g. **/*.py), newest first. Skips .gitignored files.",
    )
    def glob(pattern: str, path: str = ".") -> ToolResult:
        try:
            return find_files(workspace, pattern, path)
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return glob


def find_files(workspace: Workspace, pattern: str, path: str = ".") -> ToolResult:
    """What `glob` answers; raises the `FILE_ERRORS` it meets."""
    matcher = GlobPattern(pattern)
    start = workspace.resolve_read(path)
    if not os.path.isdir(start):
        raise NotADirectoryError(path)
    base = workspace.relative(start)
    files = walk_files(workspace.root, start, workspace.ignore())
    found = [
        (entry.mtime_ns, entry.rel) for entry in files if matcher.matches(below(base, entry.rel))
    ]
    stopped = f"\n[{files.stopped}]" if files.stopped else ""
    if not found:
        return ToolResult(f"No files match {pattern!r}.{stopped}")
    found.sort(key=lambda item: (-item[0], item[1]))
    shown = [rel for _, rel in found[:MAX_FILES]]
    if len(found) > MAX_FILES:
        shown.append(f"[the {MAX_FILES} newest of {len(found)}; narrow the pattern or path]")
    return ToolResult("\n".join(shown) + stopped)
