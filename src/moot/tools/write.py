"""The `write` tool: create a file, or overwrite one the session has read.

Overwriting needs a read first, and the file must not have changed since, so nothing a person
(or another agent) put there is lost unseen. An overwritten file keeps its encoding, byte
order mark, line endings and mode; a new file is UTF-8, with missing parent directories made.
In an editor that takes writes, the file is written into the editor's buffer instead
(`moot.tools.editor_buffer`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from moot.tools.base import OUTSIDE_A_RUN, FunctionTool, SideEffect, ToolContext, ToolResult, tool
from moot.tools.editor_buffer import held_text
from moot.workspace.diff import unified_diff
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.no_follow import read_file_bytes
from moot.workspace.paths import Workspace
from moot.workspace.text import (
    UTF8,
    dominant_newline,
    encode,
    sniff_encoding,
    split_lines,
    to_newline,
)

__all__ = ["OUTSIDE_A_RUN", "write_file", "write_tool"]


def write_tool(workspace: Workspace, parameters: dict[str, Any] | None = None) -> FunctionTool:
    """The `write` tool, bound to `workspace` and its ledger.

    `parameters` is its schema when known ahead (the generated spec): see `FunctionTool`.
    """

    @tool(
        name="write",
        side_effect=SideEffect.WRITES_WORKSPACE,
        description="Create or overwrite a file. Read an existing file before overwriting it.",
        parameters=parameters,
    )
    def write(path: str, content: str, ctx: ToolContext = OUTSIDE_A_RUN) -> ToolResult:
        try:
            return write_file(workspace, path, content, run_id=ctx.run_id)
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return write


def write_file(workspace: Workspace, path: str, content: str, *, run_id: str = "") -> ToolResult:
    """What `write` answers; raises the `FILE_ERRORS` it meets.

    Args:
        workspace: Where `path` is.
        path: The file, as the model named it.
        content: The whole new content.
        run_id: The run writing, for the workspace's file snapshots; "" outside a run.
    """
    target = workspace.resolve_write(path)
    workspace.refuse_hidden(target, path)  # before the existence check: no oracle on it
    try:
        existing, info = read_file_bytes(workspace.root_of(target), target)
    except FileNotFoundError:
        existing = None
    else:  # what it holds shapes the write (encoding, line ends) and shows in its diff
        workspace.refuse_linked(info, path)
    if workspace.editor_write is not None:
        held = held_text(workspace, target, path) if existing is not None else None
        if existing is None or held is not None:  # the editor's buffer (a new one for a new file)
            return _write_to_editor(workspace, target, content, held, run_id)
    old_text: str | None = None
    new_text = content
    if existing is None:
        data = encode(content, UTF8)
    else:
        workspace.ledger.require_read(target, existing)
        encoding = sniff_encoding(existing[:4])
        old_text = existing[len(encoding.bom) :].decode(encoding.codec, "replace")
        new_text = to_newline(content, dominant_newline(old_text))
        data = encode(new_text, encoding)
    writer = workspace.write_bytes(target, data, run_id=run_id)
    assert writer.stat is not None
    workspace.ledger.record(target, writer.stat, data)
    return _written(workspace.relative(target), content, old_text, new_text, writer.snapshot_note)


def _write_to_editor(
    workspace: Workspace, target: Path, content: str, held: str | None, run_id: str
) -> ToolResult:
    """`write` into the editor's buffer: `held` is its text of the file, None for a new one."""
    new_text = content
    if held is not None:
        workspace.ledger.check_text(target, held, must_have_read=True)
        new_text = to_newline(content, dominant_newline(held))
    note = workspace.write_through_editor(target, held, new_text, run_id=run_id)
    workspace.ledger.record_text(target, new_text)
    return _written(workspace.relative(target), content, held, new_text, note)


def _written(rel: str, content: str, old_text: str | None, new_text: str, note: str) -> ToolResult:
    verb = "Created" if old_text is None else "Overwrote"
    count = len(split_lines(content))
    shown = f"\n[{note}]" if note else ""
    diff = unified_diff(old_text, new_text, rel)  # front ends show it; the model does not read it
    lines = f"{count} line{'' if count == 1 else 's'}"
    return ToolResult(f"{verb} {rel} ({lines}).{shown}", display={"diff": diff})
