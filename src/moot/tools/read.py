"""The `read` tool: a file's lines, numbered as `   12\\tcode`; an image as an attachment (with
its size, fitted in the APIs' limits); a PDF's pages as a document (with their text, for models
that cannot read documents), `pages` at a time.

Output is capped (lines at 2,000 characters, the whole at 256 KB) with a note saying how to
read on with `offset`. Binary files are refused; invalid UTF-8 is shown with U+FFFD and a note.
A file up to 32 MiB is read whole and recorded in the session's ledger, so that a later edit
can tell whether it changed; a larger one is streamed, and only the lines shown are decoded.
"""

from __future__ import annotations

import base64
import io
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO

from moot.image_header import image_type
from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.attachments import MAX_FILE_BYTES, AttachmentError, image_attachment
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.no_follow import PathRefused, open_read
from moot.workspace.paths import Workspace
from moot.workspace.pdf import PdfError, pdf_attachment
from moot.workspace.text import (
    SNIFF_BYTES,
    decode_for_display,
    looks_binary,
    sniff_encoding,
    split_lines,
)

if TYPE_CHECKING:  # `moot.tools.schema` resolves it when it builds the argument model
    from pydantic import Field

MAX_OUTPUT_BYTES = 256 * 1024
MAX_LINE_CHARS = 2000
WHOLE_FILE_BYTES = 32 * 1024 * 1024
"""Files up to this size are read whole (and hashed for the ledger); larger ones are streamed."""
_STREAM_CHUNK = 64 * 1024


def read_tool(workspace: Workspace, parameters: dict[str, Any] | None = None) -> FunctionTool:
    """The `read` tool, bound to `workspace` and its ledger.

    `parameters` is its schema when known ahead (the generated spec): see `FunctionTool`.
    """

    @tool(
        name="read",
        side_effect=SideEffect.READ_ONLY,
        description="Read a file as numbered lines; images come back as images, PDFs as pages.",
        parameters=parameters,
    )
    def read(
        path: str,
        offset: Annotated[int, Field(ge=1, description="First line (1-based)")] = 1,
        limit: Annotated[int, Field(ge=1, description="Max lines")] = 2000,
        pages: Annotated[
            str, Field(description="A PDF's pages, e.g. 1-5 (default: the first 20)")
        ] = "",
    ) -> ToolResult:
        try:
            return read_file(workspace, path, offset, limit, pages=pages or None)
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return read


def read_file(
    workspace: Workspace,
    path: str,
    offset: int = 1,
    limit: int = 2000,
    *,
    pages: str | None = None,
) -> ToolResult:
    """What `read` answers; raises the `FILE_ERRORS` it meets.

    Args:
        workspace: Where `path` is.
        path: The file, as the model named it.
        offset: The first line to show, from 1.
        limit: How many lines to show at most.
        pages: A PDF's pages ("1-5").
    """
    target = workspace.resolve_read(path)
    workspace.refuse_hidden(target, path)
    rel = workspace.relative(target)
    with os.fdopen(open_read(workspace.root_of(target), target), "rb") as file:
        st = os.fstat(file.fileno())
        workspace.refuse_linked(st, path)
        if stat.S_ISDIR(st.st_mode):
            return ToolResult.error(f"{rel} is a directory; use ls to list it")
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused("not-a-file", path, "only regular files can be read")
        head = file.read(SNIFF_BYTES)
        mime = image_type(head)
        if mime is not None or head.startswith(b"%PDF-"):
            return _attached(workspace, target, file, st, head, pages)
        if looks_binary(head):
            return ToolResult.error(
                f"{rel} is a binary file ({st.st_size} bytes); read shows text and images only"
            )
        if st.st_size <= WHOLE_FILE_BYTES:
            data = head + file.read()
            workspace.ledger.record(target, st, data)
            if workspace.editor_text is not None:
                return _from_editor(workspace, target, data, rel, offset, limit)
            return _whole(data, rel, offset, limit)
        workspace.ledger.record(target, st, None)
        return _streamed(file, head, rel, st.st_size, offset, limit)


def _from_editor(
    workspace: Workspace, target: Path, data: bytes, rel: str, offset: int, limit: int
) -> ToolResult:
    """The file as the person's editor holds it, marked when it differs from the disk. Edits
    apply to the editor's text when it takes writes (the ledger keeps that text too), else
    to the file on disk."""
    assert workspace.editor_text is not None
    try:
        text = workspace.editor_text(str(target))
    except Exception:  # the editor did not answer: the disk is the truth then
        text = None
    if text is not None and workspace.editor_write is not None:
        workspace.ledger.record_text(target, text)
    if text is None or text.encode("utf-8") == data:
        return _whole(data, rel, offset, limit)
    shown = _whole(text.encode("utf-8"), rel, offset, limit)
    applies = "the editor's text" if workspace.editor_write is not None else "the disk"
    note = f"[the editor's unsaved text; the file on disk differs, and edits apply to {applies}]"
    return ToolResult(f"{shown.content}\n{note}", is_error=shown.is_error)


def _attached(
    workspace: Workspace,
    target: Path,
    file: BinaryIO,
    st: os.stat_result,
    head: bytes,
    pages: str | None,
) -> ToolResult:
    """An image (fitted in the APIs' limits) or a PDF's pages, as an attachment."""
    rel = workspace.relative(target)
    if st.st_size > MAX_FILE_BYTES:
        return ToolResult.error(
            f"{rel} is {st.st_size} bytes; images and PDFs over"
            f" {MAX_FILE_BYTES // (1024 * 1024)} MB are not sent"
        )
    data = head + file.read()
    workspace.ledger.record(target, st, data)
    if data.startswith(b"%PDF-"):
        try:
            document, (first, last, count) = pdf_attachment(data, rel, pages)
        except PdfError as exc:
            return ToolResult.error(str(exc))
        more = f"; read on with pages={last + 1}-" if last < count else ""
        summary = f"{rel}: PDF, pages {first}-{last} of {count}{more}"
        return ToolResult(summary, attachments=(document,))
    try:
        image = image_attachment(data, image_type(head) or "image/png", rel)
    except AttachmentError as exc:
        return ToolResult.error(str(exc))
    size = f"{image.width}x{image.height}"
    shrunk = "" if image.data == base64.b64encode(data).decode() else ", downscaled to fit"
    return ToolResult(
        f"{rel}: {image.mime_type}, {size}, {len(data)} bytes{shrunk}", attachments=(image,)
    )


def _whole(data: bytes, rel: str, offset: int, limit: int) -> ToolResult:
    text, lossy = decode_for_display(data, sniff_encoding(data[:4]))
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return ToolResult(f"{rel} is empty.")
    if offset > total:
        return ToolResult.error(f"offset {offset} is past the end of {rel} ({total} lines)")
    window = lines[offset - 1 : offset - 1 + limit]
    body, last, capped = _render(((line, len(line)) for line in window), offset)
    notes = []
    if capped or last < total:
        cap = f"output capped at {MAX_OUTPUT_BYTES // 1024} KB; " if capped else ""
        notes.append(f"[{cap}lines {offset}-{last} of {total}; continue with offset={last + 1}]")
    if lossy:
        notes.append("[not valid UTF-8: undecodable bytes are shown as \ufffd]")
    return ToolResult("\n".join([body, *notes]))


def _streamed(
    file: BinaryIO, head: bytes, rel: str, size: int, offset: int, limit: int
) -> ToolResult:
    encoding = sniff_encoding(head)
    file.seek(len(encoding.bom))
    reader = io.TextIOWrapper(file, encoding=encoding.codec, errors="replace", newline="\n")
    lines = _stream_lines(reader)
    for _ in range(offset - 1):
        if next(lines, None) is None:
            return ToolResult.error(f"offset {offset} is past the end of {rel}")
    window: list[tuple[str, int]] = []
    binary = False
    for line in lines:
        if "\x00" in line[0]:
            binary = True  # binary data further in: stop before it
            break
        window.append(line)
        if len(window) == limit:
            break
    reader.detach()  # the caller closes the file
    if not window:
        return ToolResult.error(f"offset {offset} is past the end of the text in {rel}")
    body, last, _ = _render(window, offset)
    mib = size / (1024 * 1024)
    after = f"binary data from line {last + 1} on" if binary else f"continue with offset={last + 1}"
    return ToolResult(
        f"{body}\n[{rel} is large ({mib:.0f} MiB): showing lines {offset}-{last}; {after}]"
    )


def _stream_lines(reader: io.TextIOWrapper) -> Iterator[tuple[str, int]]:
    """Lines without their line break, at most `MAX_LINE_CHARS` + 1 kept, and full lengths."""
    while True:
        line = reader.readline(_STREAM_CHUNK)
        if not line:
            return
        length = len(line)
        while not line.endswith("\n") and "\x00" not in line:  # a long line: keep its start
            more = reader.readline(_STREAM_CHUNK)
            if not more:
                break
            length += len(more)
            line = line[: MAX_LINE_CHARS + 1] + ("\x00" if "\x00" in more else more[-1:])
        if line.endswith("\n"):
            line, length = line[:-1], length - 1
        if line.endswith("\r"):
            line, length = line[:-1], length - 1
        yield line[: MAX_LINE_CHARS + 1], length


def _render(lines: Iterable[tuple[str, int]], first: int) -> tuple[str, int, bool]:
    """Numbered lines up to the output cap: the text, the last line number, whether capped."""
    out: list[str] = []
    size = 0
    last = first - 1
    for number, (line, length) in enumerate(lines, first):
        if length > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [line cut: {length - MAX_LINE_CHARS} more chars]"
        entry = f"{number:5}\t{line}"
        size += len(entry) + 1
        if size > MAX_OUTPUT_BYTES and out:
            return "\n".join(out), last, True
        out.append(entry)
        last = number
    return "\n".join(out), last, False
