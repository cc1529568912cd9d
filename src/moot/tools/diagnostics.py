"""The `diagnostics` tool: the errors and warnings language servers report for a file, or for
the workspace (every file this session changed, and every file a server holds open).

A server is started for a language at its first look, as after an edit (`moot.lsp`); a file
whose language has no server here is named with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.errors import FILE_ERRORS, describe

if TYPE_CHECKING:
    from moot.lsp.session import LanguageServers
    from moot.workspace.paths import Workspace

MAX_LINES = 200
"""Diagnostics listed at most; the rest are counted."""
NO_SERVERS = "No language servers in this session."


def diagnostics_tool(workspace: Workspace, servers: LanguageServers | None) -> FunctionTool:
    """The `diagnostics` tool over the session's language servers (None: there are none)."""

    @tool(
        name="diagnostics",
        side_effect=SideEffect.READ_ONLY,
        description=(
            "Errors and warnings from language servers (type checkers) for a file, or, "
            "without a path, for every file this session changed."
        ),
    )
    async def diagnostics(
        path: Annotated[str | None, "A file; omit for the files this session changed"] = None,
    ) -> ToolResult:
        if servers is None:
            return ToolResult(NO_SERVERS)
        if path is not None:
            try:
                target = workspace.resolve_read(path)
                workspace.refuse_hidden(target, path)
            except FILE_ERRORS as exc:
                return ToolResult.error(describe(exc, path))
            if not target.is_file():
                return ToolResult.error(f"{path}: not a file")
            files = [target]
        else:
            files = sorted({*workspace.changed, *servers.open_paths()})
        checked = [(f, workspace.relative(f)) for f in files if servers.language_of(f)]
        lines = await servers.diagnostics(checked)
        return ToolResult(_report(lines, checked, servers, path))

    return diagnostics


def _report(
    lines: list[str],
    checked: list[tuple[Path, str]],
    servers: LanguageServers,
    path: str | None,
) -> str:
    out = []
    if not checked:
        if path is not None:
            out.append(f"{path}: no language server for it here.")
        else:
            out.append("No file this session changed has a language with a language server here.")
    elif not lines:
        out.append(f"No errors or warnings in {len(checked)} file(s).")
    else:
        out += lines[:MAX_LINES]
        if len(lines) > MAX_LINES:
            out.append(f"... and {len(lines) - MAX_LINES} more")
    if unavailable := servers.unavailable():
        out.append("Without a server: " + "; ".join(unavailable))
    return "\n".join(out)
