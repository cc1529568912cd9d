"""The `repo_map` tool: the workspace's most used source files with their main declarations.

See `moot.repomap` for how files are ranked and how the map is cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import Field

from moot.repomap import RepoIndex, map_repository
from moot.repomap.render import estimate_tokens
from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.paths import Workspace

DEFAULT_TOKENS = 1024
MAX_TOKENS = 8192
_FOOTER = "[{shown} of {total} source files; more tokens or a focus show others]"
_FOOTER_TOKENS = estimate_tokens(_FOOTER.format(shown=99_999, total=99_999)) + 1
"""Held back from the map's budget, so the whole result stays within `tokens`."""


def repo_map_tool(workspace: Workspace) -> FunctionTool:
    """The `repo_map` tool, bound to `workspace`."""

    @tool(
        name="repo_map",
        side_effect=SideEffect.READ_ONLY,
        description=(
            "Outline the code: the most referenced source files, best first, with their main "
            "declarations (Python, JavaScript, TypeScript, Go, Rust)."
        ),
    )
    def repo_map(
        focus: Annotated[
            list[str] | None,
            Field(description="Paths or names from the conversation, to rank higher"),
        ] = None,
        tokens: Annotated[
            int, Field(ge=64, le=MAX_TOKENS, description="Size of the outline")
        ] = DEFAULT_TOKENS,
    ) -> ToolResult:
        return map_workspace(workspace, focus or (), tokens)

    return repo_map


def session_index(workspace: Workspace) -> RepoIndex:
    """The workspace's repository index, made at the first map or lookup and kept for the
    session: `repo_map` and `symbols` share it, and it parses in the background."""
    return workspace.keep(
        "repomap", lambda: RepoIndex(workspace.root, files=workspace.file_index())
    )


def map_workspace(workspace: Workspace, focus: Sequence[str], tokens: int) -> ToolResult:
    """What `repo_map` answers: the map, whose estimated tokens stay within `tokens`."""
    result = map_repository(
        session_index(workspace),
        focus=focus,
        tokens=tokens - _FOOTER_TOKENS,
        hidden=workspace.hidden,
        inodes=workspace.inode_check(),
    )
    notes = "".join(f"\n[{note}]" for note in result.notes)
    display = {"shown": result.shown, "files": len(result.ranked), "parsed": len(result.parsed)}
    if not result.ranked:
        return ToolResult(
            "No Python, JavaScript, TypeScript, Go or Rust source files found." + notes,
            display=display,
        )
    if not result.text:
        return ToolResult(f"Not even one file fits in {tokens} tokens; ask for more.")
    text = result.text
    if result.shown < len(result.ranked):
        text += _FOOTER.format(shown=result.shown, total=len(result.ranked))
    return ToolResult(text + notes, display=display)
