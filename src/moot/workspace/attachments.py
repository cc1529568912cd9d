"""A file the person attaches (`@shot.png`, a pasted or dragged path, `-i FILE`, a clipboard
image) as an `Attachment`, or one clear message saying why not; nothing is sent then.

Front ends call `attachment_from_path` (or `attachment_from_bytes` for a clipboard's image):
images (PNG, JPEG, GIF, WebP) are checked by their content, not their name, decoded to prove
they are whole, and fitted in `ATTACH_LIMITS` (downscaled and re-encoded: no API reads more);
a PDF gives its pages (`pages`, the first `DEFAULT_PAGES` by default) with their text.
"""

from __future__ import annotations

import base64
import errno
import os
import stat
from pathlib import Path

from moot.image_header import image_type
from moot.protocol.messages import Attachment
from moot.providers.images import (
    ATTACH_LIMITS,
    ImageError,
    ImageLimits,
    ImageTooLarge,
    shrink,
)
from moot.workspace.pdf import PdfError, pdf_attachment

MAX_FILE_BYTES = 50 * 1024 * 1024
"""A larger file is refused before it is read (a photo is a few MB, a spec PDF rarely 20)."""
_BY_SUFFIX = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".pdf": "application/pdf",
}
_KIND = {
    "image/png": "a PNG image",
    "image/jpeg": "a JPEG image",
    "image/gif": "a GIF image",
    "image/webp": "a WebP image",
    "application/pdf": "a PDF",
}


class AttachmentError(ValueError):
    """A file that cannot be attached; the message says why, naming it."""


def attachment_from_path(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    pages: str | None = None,
    limits: ImageLimits = ATTACH_LIMITS,
) -> Attachment:
    """The file at `path` as an attachment (an image fitted in `limits`, or a PDF's pages).

    Args:
        path: The file.
        name: What to call it (to people and in the log); the file's name by default.
        pages: For a PDF, the pages to attach ("1-5"); the first `DEFAULT_PAGES` by default.
        limits: What an image is fitted in.

    Raises:
        AttachmentError: It is missing, unreadable, a directory, empty, larger than
            `MAX_FILE_BYTES`, of another type than it claims, damaged, a password-protected
            PDF, or neither an image nor a PDF.
    """
    target = Path(path)
    label = name or target.name
    try:
        with open(target, "rb") as file:
            st = os.fstat(file.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise AttachmentError(f"{path} is a directory, not a file to attach")
            if st.st_size > MAX_FILE_BYTES:
                raise AttachmentError(
                    f"{path} is {_mb(st.st_size)}; an attachment is at most {_mb(MAX_FILE_BYTES)}"
                )
            raw = file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise AttachmentError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AttachmentError(f"{path} is a directory, not a file to attach") from None
    except PermissionError:
        raise AttachmentError(f"{path} cannot be read: permission denied") from None
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        if exc.errno == errno.ENOTDIR:
            reason = "a part of the path is not a directory"
        raise AttachmentError(f"{path} cannot be read: {reason}") from None
    return attachment_from_bytes(raw, label, claimed=_BY_SUFFIX.get(target.suffix.lower()),
                                 pages=pages, limits=limits)  # fmt: skip


def attachment_from_bytes(
    raw: bytes,
    name: str,
    *,
    claimed: str | None = None,
    pages: str | None = None,
    limits: ImageLimits = ATTACH_LIMITS,
) -> Attachment:
    """`raw` (a file's bytes, a clipboard's image) as an attachment named `name`.

    Args:
        raw: The content.
        name: What to call it.
        claimed: The type its name claims (`.png`: `image/png`), checked against its content.
        pages: See `attachment_from_path`.
        limits: See `attachment_from_path`.

    Raises:
        AttachmentError: As `attachment_from_path`.
    """
    if not raw:
        raise AttachmentError(f"{name} is empty")
    if len(raw) > MAX_FILE_BYTES:
        raise AttachmentError(f"{name} is over {_mb(MAX_FILE_BYTES)}, the most an attachment is")
    mime = content_type(raw)
    if mime is None:
        if claimed is not None:
            raise AttachmentError(
                f"{name} is named like {_KIND[claimed]} but is not one (its content is not "
                f"{_KIND[claimed]}'s)"
            )
        raise AttachmentError(
            f"{name} is neither an image (PNG, JPEG, GIF, WebP) nor a PDF; attach text files "
            f"as @path in the message"
        )
    if claimed is not None and claimed != mime and not _same_family(claimed, mime):
        raise AttachmentError(f"{name} is named like {_KIND[claimed]} but is {_KIND[mime]}")
    if mime == "application/pdf":
        try:
            return pdf_attachment(raw, name, pages)[0]
        except PdfError as exc:
            raise AttachmentError(str(exc)) from None
    return image_attachment(raw, mime, name, limits)


def image_attachment(
    raw: bytes, mime: str, name: str, limits: ImageLimits = ATTACH_LIMITS
) -> Attachment:
    """Image bytes of type `mime` as an attachment, proved whole and fitted in `limits`.

    Raises:
        AttachmentError: Pillow cannot decode it (damaged, cut short).
    """
    try:
        data, mime, width, height = shrink(raw, mime, limits, prove=True)
    except ImageTooLarge as exc:
        raise AttachmentError(f"{name}: {exc}") from None
    except ImageError as exc:
        kind = _KIND.get(mime, "an image").removeprefix("a ").removeprefix("an ")
        raise AttachmentError(f"{name} is a damaged {kind}: {exc}") from None
    return Attachment(
        mime_type=mime,
        data=base64.b64encode(data).decode(),
        name=name,
        width=width,
        height=height,
    )


def content_type(raw: bytes) -> str | None:
    """An image's or PDF's media type from its first bytes; None for anything else."""
    if raw.startswith(b"%PDF-"):
        return "application/pdf"
    return image_type(raw)


def _same_family(claimed: str, found: str) -> bool:
    return claimed.startswith("image/") and found.startswith("image/")


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB"
