"""The `grep` tool: search file contents with a regular expression.

ripgrep runs the search when it is on PATH; otherwise a pure-Python search gives the same
output (see `moot.workspace.search`). Ignored files, binary files and `.git` are skipped. A
directory added beside the workspace (`--add-dir`) is searched with its own ignore files, and
its files are shown by absolute path.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Annotated, Literal

from pydantic import Field

from moot.paths import host_program
from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.ignore import GlobPattern
from moot.workspace.no_follow import PathRefused
from moot.workspace.paths import Workspace
from moot.workspace.ripgrep import search_ripgrep
from moot.workspace.search import SearchRequest, format_hits, search_python
from moot.workspace.walk import deadline_after


def grep_tool(workspace: Workspace, *, use_ripgrep: bool = True) -> FunctionTool:
    """The `grep` tool, bound to `workspace`.

    Args:
        workspace: Where to search.
        use_ripgrep: Use `rg` when it is on PATH (looked up now); False forces the Python
            search.
    """
    rg = host_program("rg", (workspace.root, *workspace.added_roots)) if use_ripgrep else None

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
            root, start = workspace.resolve_search(path)
            workspace.refuse_hidden(start, path)
            # A missing path is an error, not "no matches". A FIFO or a device is refused:
            # ripgrep would wait on one forever, or read one without end.
            info = os.stat(start, follow_symlinks=False)
            mode = info.st_mode
            if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
                raise PathRefused("not-a-file", path, "not a regular file or directory")
            inodes = workspace.inode_check()
            workspace.refuse_linked(info, path, inodes)
            request = SearchRequest(
                pattern=pattern,
                root=root,
                start=start,
                include=GlobPattern(glob) if glob else None,
                exclude=GlobPattern(exclude) if exclude else None,
                context=context if output == "content" else 0,
                ignore_case=ignore_case,
                hidden=workspace.hidden_in(root),
                inodes=inodes,
                deadline=deadline_after(),
            )
            notes: list[str] = []
            # One file is searched without ripgrep, which would follow a symlink swapped in.
            if rg and stat.S_ISDIR(mode):
                hits = search_ripgrep(rg, request, notes=notes)
            else:
                hits = search_python(request, notes)
            with contextlib.closing(hits):
                shown = ((workspace.shown(root, rel), found) for rel, found in hits)
                text = format_hits(shown, output, context=request.context)
            return ToolResult(text + "".join(f"\n[{note}]" for note in notes))
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return grep
