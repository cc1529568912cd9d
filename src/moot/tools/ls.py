"""The `ls` tool: a directory as an indented tree, .gitignore honoured, `.git` skipped."""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import Field

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.paths import Workspace
from moot.workspace.walk import Entry, walk

MAX_ENTRIES = 500


def ls_tool(workspace: Workspace) -> FunctionTool:
    """The `ls` tool, bound to `workspace`."""

    @tool(
        name="ls",
        side_effect=SideEffect.READ_ONLY,
        description="List a directory as a tree; directories end in /. Skips .gitignored files.",
    )
    def ls(
        path: str = ".",
        depth: Annotated[int, Field(ge=1, le=10, description="Levels to show")] = 2,
    ) -> ToolResult:
        try:
            return list_tree(workspace, path, depth)
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return ls


def list_tree(workspace: Workspace, path: str = ".", depth: int = 2) -> ToolResult:
    """What `ls` answers; raises the `FILE_ERRORS` it meets."""
    root, start = workspace.resolve_search(path)
    if not os.path.isdir(start):
        raise NotADirectoryError(path)
    lines = [f"{workspace.relative(start)}/"]  # an added root's directories: absolute
    entries = walk(root, start, workspace.ignore(root), max_depth=depth)
    for entry in entries:
        if len(lines) > MAX_ENTRIES:
            lines.append(f"[capped at {MAX_ENTRIES} entries; list a subdirectory or less depth]")
            break
        lines.append("  " * entry.depth + _name(entry))
    if len(lines) == 1:
        lines.append("  (empty)")
    if entries.stopped:
        lines.append(f"[{entries.stopped}]")
    return ToolResult("\n".join(lines))


def _name(entry: Entry) -> str:
    name = entry.parts[-1]
    if entry.is_dir:
        return name + "/"
    if entry.is_link:
        return name + "@"  # never followed: its target may be outside the workspace
    return name
