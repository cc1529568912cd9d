"""The `grep` tool: search file contents with a regular expression.

ripgrep runs the search when it is on PATH; otherwise a pure-Python search gives the same
output (see `moot.workspace.search`). Ignored files, binary files and `.git` are skipped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Annotated, Literal

from pydantic import Field

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.ignore import GlobPattern
from moot.workspace.paths import Workspace
from moot.workspace.ripgrep import search_ripgrep
from moot.workspace.search import SearchRequest, format_hits, search_python


def grep_tool(workspace: Workspace, *, use_ripgrep: bool = True) -> FunctionTool:
    """The `grep` tool, bound to `workspace`.

    Args:
        workspace: Where to search.
        use_ripgrep: Use `rg` when it is on PATH (looked up now); False forces the Python
            search.
    """
    rg = shutil.which("rg") if use_ripgrep else None

    @tool(
        name="grep",
        side_effect=SideEffect.READ_ONLY,
        description="Search file contents by regex (one line at a time). Skips .gitignored files.",
    )
    def grep(
        pattern: str,
        path: str = ".",
        glob: Annotated[str | None, Field(description="Only files matching")] = None,
        exclude: Annotated[str | None, Field(description="Skip files matching")] = None,
        context: Annotated[int, Field(ge=0, le=50, description="Lines around matches")] = 0,
        output: Literal["content", "files", "count"] = "content",
        ignore_case: bool = False,
    ) -> ToolResult:
        try:
            start = workspace.resolve_read(path)
            os.stat(start)  # a missing path is an error, not "no matches"
            request = SearchRequest(
                pattern=pattern,
                root=workspace.root,
                start=start,
                include=GlobPattern(glob) if glob else None,
                exclude=GlobPattern(exclude) if exclude else None,
                context=context if output == "content" else 0,
                ignore_case=ignore_case,
                hidden=workspace.hidden,
            )
            hits = search_ripgrep(rg, request) if rg else search_python(request)
            with contextlib.closing(hits):
                return ToolResult(format_hits(hits, output, context=request.context))
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return grep
