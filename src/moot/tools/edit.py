"""The `edit` tool: replace exact text in a file.

`old` must occur exactly once (or `replace_all`); in a CRLF file it may be written with "\\n".
The file keeps its encoding, byte order mark, line endings and mode; a file that changed on
disk since the session read it is refused. The match and the write happen in memory and then
at once: a refused edit changes nothing. In an editor that takes writes, the edit applies to
the editor's buffer instead (`moot.tools.editor_buffer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

from moot.tools.base import FunctionTool, SideEffect, ToolContext, ToolResult, tool
from moot.tools.editor_buffer import held_text
from moot.tools.write import OUTSIDE_A_RUN
from moot.workspace.diff import unified_diff
from moot.workspace.edits import EditLike, apply_edits
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.no_follow import read_file_bytes
from moot.workspace.paths import Workspace
from moot.workspace.text import SNIFF_BYTES, decode, encode, looks_binary, sniff_encoding


class _Replacement:
    __slots__ = ("new", "old", "replace_all")

    def __init__(self, old: str, new: str, replace_all: bool) -> None:
        self.old, self.new, self.replace_all = old, new, replace_all


def edit_tool(workspace: Workspace, parameters: dict[str, Any] | None = None) -> FunctionTool:
    """The `edit` tool, bound to `workspace` and its ledger.

    `parameters` is its schema when known ahead (the generated spec): see `FunctionTool`.
    """

    @tool(
        name="edit",
        side_effect=SideEffect.WRITES_WORKSPACE,
        description="Replace exact text in a file. old must be unique unless replace_all.",
        parameters=parameters,
    )
    def edit(
        path: str,
        old: str,
        new: str,
        replace_all: Annotated[bool, "Replace every match"] = False,
        ctx: ToolContext = OUTSIDE_A_RUN,
    ) -> ToolResult:
        edits = [_Replacement(old, new, replace_all)]
        return edit_file(workspace, path, edits, run_id=ctx.run_id)

    return edit


def edit_file(
    workspace: Workspace, path: str, edits: Sequence[EditLike], *, run_id: str = ""
) -> ToolResult:
    """Apply `edits` to a file, all or none; the result for `edit` and `multi_edit`.

    Args:
        workspace: Where `path` is.
        path: The file, as the model named it.
        edits: Applied in order, each to the result of the ones before.
        run_id: The run editing, for the workspace's file snapshots; "" outside a run.

    Returns:
        What changed, or an error result when any edit cannot be applied (nothing written).
    """
    try:
        target = workspace.resolve_write(path)
        workspace.refuse_hidden(target, path)
        rel = workspace.relative(target)
        held = held_text(workspace, target, path)
        if held is not None:  # the editor's buffer, as the model read it
            workspace.ledger.check_text(target, held)
            before = held
            text, done = apply_edits(before, edits)
            note = workspace.write_through_editor(target, held, text, run_id=run_id)
            workspace.ledger.record_text(target, text)
        else:
            edited = _edit_on_disk(workspace, target, path, edits, run_id)
            if isinstance(edited, ToolResult):
                return edited
            before, text, done, note = edited
    except FileNotFoundError:
        return ToolResult.error(f"{path}: no such file; use write to create it")
    except FILE_ERRORS as exc:
        return ToolResult.error(describe(exc, path))
    replaced = sum(count for _, count in done)
    lines = ", ".join(str(line) for line, _ in done)
    many = "s" if replaced > 1 else ""
    at = f"line{'s' if len(done) > 1 else ''} {lines}"
    note = f"\n[{note}]" if note else ""
    diff = unified_diff(before, text, rel)  # front ends show it; the model does not read it
    return ToolResult(
        f"Edited {rel}: {replaced} replacement{many}, at {at}.{note}", display={"diff": diff}
    )


def _edit_on_disk(
    workspace: Workspace, target: Path, path: str, edits: Sequence[EditLike], run_id: str
) -> ToolResult | tuple[str, str, list[tuple[int, int]], str]:
    """Edit the file on disk: the text before and after, where each edit applied and the
    snapshot's note; or the error result for a binary file."""
    data, info = read_file_bytes(workspace.root_of(target), target)
    workspace.refuse_linked(info, path)
    if looks_binary(data[:SNIFF_BYTES]):
        rel = workspace.relative(target)
        return ToolResult.error(f"{rel} is a binary file; edit changes text files only")
    workspace.ledger.check_fresh(target, data)
    encoding = sniff_encoding(data[:4])
    before = decode(data, encoding)
    text, done = apply_edits(before, edits)
    out = encode(text, encoding)
    writer = workspace.write_bytes(target, out, run_id=run_id)
    assert writer.stat is not None
    workspace.ledger.record(target, writer.stat, out)
    return before, text, done, writer.snapshot_note
