"""What front ends attach: a path (`@shot.png`, a pasted or dragged path, `-i FILE`) or a
clipboard's bytes as an `Attachment`, or one `AttachmentError` saying why not (nothing is sent
then). Front ends may not import `moot.workspace`; this is their door to it."""

from __future__ import annotations

from moot.workspace.attachments import (
    MAX_FILE_BYTES,
    AttachmentError,
    attachment_from_bytes,
    attachment_from_path,
    content_type,
)

__all__ = [
    "MAX_FILE_BYTES",
    "AttachmentError",
    "attachment_from_bytes",
    "attachment_from_path",
    "content_type",
]
