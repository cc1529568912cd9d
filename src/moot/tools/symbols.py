"""The `symbols` tool: where a name is defined, as `path:line: declaration` lines.

It reads the same per-file index (and cache) as `repo_map`; see `moot.repomap`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from moot.repomap import find_symbols, similar_names
from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.tools.repo_map import session_index
from moot.workspace.paths import Workspace

MAX_SYMBOLS = 50


def symbols_tool(workspace: Workspace) -> FunctionTool:
    """The `symbols` tool, bound to `workspace`."""

    @tool(
        name="symbols",
        side_effect=SideEffect.READ_ONLY,
        description="Find where a name is defined: path:line: declaration. Accepts Class.method.",
    )
    def symbols(
        name: Annotated[str, Field(min_length=1, description="An identifier, or Class.method")],
    ) -> ToolResult:
        return find_definitions(workspace, name)

    return symbols


def find_definitions(workspace: Workspace, name: str) -> ToolResult:
    """What `symbols` answers: the definitions of `name`, by path and line, capped."""
    if not name.strip(" .:"):
        return ToolResult.error("Give a name to look up, e.g. Config or Config.load.")
    index = session_index(workspace).index(workspace.hidden, workspace.inode_check())
    notes = "".join(f"\n[{note}]" for note in index.notes)  # files not parsed yet, say
    found = find_symbols(index.files, name, index.facts)
    if not found:
        similar = similar_names(index.facts, name)
        hint = f" Similar names: {', '.join(similar)}." if similar else ""
        return ToolResult(f"No definition of {name!r} found.{hint}{notes}")
    lines = [f"{s.path}:{s.line}: {s.signature}" for s in found[:MAX_SYMBOLS]]
    if len(found) > MAX_SYMBOLS:
        lines.append(f"[the first {MAX_SYMBOLS} of {len(found)}; qualify it, e.g. Class.method]")
    return ToolResult("\n".join(lines) + notes, display={"found": len(found)})
