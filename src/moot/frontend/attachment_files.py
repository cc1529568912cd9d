"""A transcript's attachments: their one-line description, their file names in a markdown
export's folder (one file per distinct attachment, however many turns sent it), their bytes,
and an HTML page's inline `<img>` (a `data:` URL: the page still fetches nothing)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from moot.protocol import events as ev
from moot.protocol.messages import Attachment

_EXTENSIONS = {
    "image/png": "png",
    "image/jpeg": "jpg",
    "image/gif": "gif",
    "image/webp": "webp",
    "application/pdf": "pdf",
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def folder_of(session_id: str) -> str:
    """The folder beside a markdown export that holds its attachments (relative links)."""
    return f"{session_id}-attachments"


def described(attachment: Attachment) -> str:
    """`shot.png, image/png, 1280x720, 84 KB`: what a placeholder says of an attachment."""
    parts = [attachment.label, attachment.mime_type]
    if attachment.width and attachment.height:
        parts.append(f"{attachment.width}x{attachment.height}")
    size = len(attachment.data) * 3 // 4 - attachment.data.count("=", -2)
    parts.append(f"{size // 1024} KB" if size >= 1024 else f"{size} bytes")
    return ", ".join(parts)


def attachments_of(event: ev.Event) -> tuple[Attachment, ...]:
    """The attachments an event carries (a turn's prompt, a tool's result)."""
    if isinstance(event, ev.TurnStarted | ev.ToolFinished):
        return event.attachments
    return ()


class FileNames:
    """File names for a session's attachments, in order of first appearance; an attachment
    sent again keeps its first name."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def name(self, attachment: Attachment) -> str:
        name = self._names.get(attachment.data)
        if name is None:
            stem = _UNSAFE.sub("-", (attachment.name or "attachment").rsplit("/", 1)[-1])
            stem = stem.rsplit(".", 1)[0] or "attachment"
            extension = _EXTENSIONS.get(attachment.mime_type, "bin")
            name = self._names[attachment.data] = f"{len(self._names) + 1:02d}-{stem}.{extension}"
        return name


def attachment_files(events: Iterable[ev.Event]) -> list[tuple[str, bytes]]:
    """Each distinct attachment of `events` as (file name, bytes), named as `as_markdown`
    links them."""
    names = FileNames()
    files: dict[str, bytes] = {}
    for event in events:
        for attachment in attachments_of(event):
            name = names.name(attachment)
            if name not in files:
                try:
                    files[name] = base64.b64decode(attachment.data)
                except (binascii.Error, ValueError):
                    files[name] = b""
    return list(files.items())


def markdown_link(attachment: Attachment, folder: str | None, names: FileNames) -> str:
    """A markdown image (or link, for a document) to the attachment's file in `folder`; a
    placeholder when there is no folder (the app's scrollback)."""
    if folder is None:
        return f"*[{described(attachment)}]*"
    target = f"{folder}/{names.name(attachment)}"
    bang = "" if attachment.is_document else "!"
    return f"{bang}[{described(attachment)}]({target})"


def html_inline(attachment: Attachment, escape: object) -> str:
    """An image as an inline `<img>` (a `data:` URL); a document as a note with its text."""
    assert callable(escape)
    label = escape(described(attachment))
    if attachment.is_image and attachment.mime_type in _EXTENSIONS:
        # escaped: data kept as it came (an MCP server's, not base64) must stay in `src`
        url = escape(f"data:{attachment.mime_type};base64,{attachment.data}")
        return (
            f'<figure><img alt="{label}" src="{url}" style="max-width:100%">'
            f"<figcaption>{label}</figcaption></figure>"
        )
    text = f"<pre>{escape(attachment.text)}</pre>" if attachment.text else ""
    return f"<details><summary>{label}</summary>{text}</details>"


def write_files(folder: Path, files: Iterable[tuple[str, bytes]]) -> None:
    """Write `files` (names from `FileNames`: no separator) into `folder`, made if missing.

    Neither the folder nor a file in it is followed when it is a symlink: the folder sits where
    the person asked for the export, often the workspace, where a command may have made
    `<session>-attachments` or `01-shot.png` a link to a file or directory outside.

    Raises:
        OSError: The folder or a file cannot be made, or is a symlink (`ELOOP`).
    """
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder)
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name, data in files:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            handle = os.open(name, flags, 0o644, dir_fd=directory)
            with os.fdopen(handle, "wb") as file:
                file.write(data)
    finally:
        os.close(directory)
