"""`Diagnosed`: a file-changing tool (`edit`, `multi_edit`, `write`) whose result ends with the
errors the change brought, as the file's language server reports them.

The file is read before the tool runs (only when its language has a server here: a suffix
look-up otherwise), so that errors already there are not blamed on the change. The note is
added to the text the model reads and, as `display["diagnostics"]`, shown on the tool's
block by the app and the REPL.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.tools.base import FinishedThenInterrupted, Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from moot.lsp.session import Baseline, LanguageServers
    from moot.workspace.paths import Workspace

SKIPPED = "[diagnostics: skipped, the wait for them was interrupted; the edit is done]"


class Diagnosed:
    """`inner`, with the new errors of the file it changed appended to its result."""

    def __init__(self, inner: Tool, workspace: Workspace, servers: LanguageServers) -> None:
        self.inner, self.workspace, self.servers = inner, workspace, servers
        self.name = inner.name
        self.description = inner.description
        self.parameters = inner.parameters
        self.side_effect = inner.side_effect

    def __getattr__(self, name: str) -> Any:  # anything else a caller asks of the tool
        return getattr(self.inner, name)

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        found = self._baseline(arguments)
        result = await self.inner.invoke(arguments, ctx)
        if result.is_error:
            return result
        if found is None:
            path = arguments.get("path")
            told = self.servers.sandbox_note(Path(path)) if isinstance(path, str) else ""
            return _noted(result, told) if told else result
        baseline, rel = found
        try:
            note = await self.servers.after_edit(baseline, rel)
        except asyncio.CancelledError:  # the person interrupted the wait: the edit stands
            raise FinishedThenInterrupted(_noted(result, SKIPPED)) from None
        except Exception as exc:  # the edit is done whatever the server did
            note = f"[diagnostics failed: {type(exc).__name__}: {exc}]"
        return _noted(result, note) if note else result

    def _baseline(self, arguments: dict[str, Any]) -> tuple[Baseline, str] | None:
        path = arguments.get("path")
        if not isinstance(path, str) or self.servers.language_of(Path(path)) is None:
            return None
        try:
            target = self.workspace.resolve_write(path)
            self.workspace.refuse_hidden(target, path)
            rel = self.workspace.relative(target)
        except Exception:  # the tool itself says what is wrong with the path
            return None
        baseline = self.servers.before_edit(target)
        return (baseline, rel) if baseline is not None else None


def _noted(result: ToolResult, note: str) -> ToolResult:
    """`result` with `note` after its text and on its block (`display["diagnostics"]`)."""
    return ToolResult(
        f"{result.content}\n{note}",
        attachments=result.attachments,
        display={**result.display, "diagnostics": note},
    )
