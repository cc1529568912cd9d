"""What front ends attach: a path (`@shot.png`, a pasted or dragged path, `-i FILE`) or a
clipboard's bytes as an `Attachment`, or one `AttachmentError` saying why not (nothing is sent
then). Front ends may not import `moot.workspace`; this is their door to it, and the one check
every front end makes (`moot.frontend.attach.Chips` is handed `attach_file`)."""

from __future__ import annotations

from pathlib import Path

from moot.protocol.messages import Attachment
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
    "attach_file",
    "attachment_from_bytes",
    "attachment_from_path",
    "content_type",
    "pasted_image",
]

_SUFFIX = {"image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def attach_file(path: Path, name: str) -> Attachment:
    """The file at `path` as an attachment named `name` (a `moot.frontend.attach.Check`).

    Raises:
        AttachmentError: As `attachment_from_path` says.
    """
    return attachment_from_path(path, name=name)


def pasted_image(raw: bytes) -> Attachment:
    """The clipboard's image, named `pasted.png` (or its own format's suffix).

    Raises:
        AttachmentError: As `attachment_from_bytes` says.
    """
    suffix = _SUFFIX.get(content_type(raw) or "", ".png")
    return attachment_from_bytes(raw, f"pasted{suffix}")
