"""Images for model requests: their size (read from the header, `moot.image_header`), what they cost
in tokens, and fitting one in a wire API's limits, downscaled and re-encoded with Pillow
(imported only when an image is too large: most never are, since attaching one already fits
it in `ATTACH_LIMITS`).

A request may carry the same image every turn: what fitting made of it is kept by the base64
text itself (`_fitted`), so a turn costs a lookup per image, not a decode.
"""

from __future__ import annotations

import base64
import binascii
import io
import math
from functools import lru_cache
from typing import NamedTuple

import msgspec

from moot.image_header import DECODED_FORMATS, image_size, image_type
from moot.protocol.messages import Attachment


class ImageLimits(NamedTuple):
    """What one wire API takes of an image."""

    max_edge: int
    """Pixels on the longest side."""
    max_bytes: int
    """Bytes of the encoded image (before base64)."""


MB = 1024 * 1024
LIMITS = {
    # Messages API: 8000 px a side, 5 MB an image.
    "anthropic": ImageLimits(8000, 5 * MB),
    # Chat Completions and Responses: 20 MB an image; past 2048 px the model sees no more.
    "openai": ImageLimits(4096, 20 * MB),
    # Inline data: the whole request at most 20 MB.
    "gemini": ImageLimits(3072, 7 * MB),
}
ATTACH_LIMITS = ImageLimits(2000, 3 * MB + MB // 2)
"""What attaching fits an image in (a path, a paste, a tool's image): no API reads more detail
than 2000 px (Anthropic scales past 1568, OpenAI past 2048), and below every API's bytes."""
TOKENS_PER_PIXEL = 1 / 750
"""Anthropic's published estimate; OpenAI's tiles and Gemini's come out close."""
MODEL_EDGE = 1568
"""Longest side a model reads at full detail; larger images cost as if scaled to it."""


MAX_DECODED_PIXELS = 40_000_000
"""Pixels of a PNG, GIF or WebP decoded at most (a 5K screenshot is 15 million): its header
declares them, and a few hundred KB of zeros can declare 13000x13000, 1.4 GB to decode
(Pillow refuses only past 179 million). A JPEG decodes at a fraction of its size (`draft`)."""


class ImageError(ValueError):
    """An image that cannot be read (corrupt, or not the type it claims)."""


class ImageTooLarge(ImageError):
    """An image declaring more pixels than `MAX_DECODED_PIXELS`."""


def image_tokens(width: int, height: int) -> int:
    """Tokens a model reads for an image this size (scaled to `MODEL_EDGE` first)."""
    scale = min(1.0, MODEL_EDGE / max(width, height, 1))
    return max(1, round(width * scale * height * scale * TOKENS_PER_PIXEL))


def attachment_tokens(attachment: Attachment) -> int:
    """An estimate of the tokens `attachment` costs a request: from an image's size, a
    document's text. Never from the data, which a resumed history holds only by reference: a
    live session and a resumed one must weigh (and so compact) alike."""
    if attachment.is_document:
        return max(1500, len(attachment.text or "") // 4)
    if attachment.width is None or attachment.height is None:
        return 1000  # a size nobody said: a screenshot's worth
    return image_tokens(attachment.width, attachment.height)


def _head(data: str) -> bytes:
    """The start of base64 `data`, decoded (a JPEG's size may sit past EXIF: all of it)."""
    head = data[:64]
    try:
        raw = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return b""
    if raw[:2] == b"\xff\xd8":
        try:
            return base64.b64decode(data)
        except (binascii.Error, ValueError):
            return raw
    return raw


def fit(attachment: Attachment, limits: ImageLimits) -> Attachment:
    """`attachment` as a request under `limits` carries it: itself when it fits (or is no
    image), else downscaled and re-encoded. An image that cannot be read goes as it is (the
    API says what it thinks of it)."""
    if not attachment.is_image:
        return attachment
    fitted = _fitted(attachment.data, attachment.mime_type, attachment.width,
                     attachment.height, limits)  # fmt: skip
    if fitted is None:
        return attachment
    data, mime, width, height = fitted
    return msgspec.structs.replace(
        attachment, data=data, mime_type=mime, width=width, height=height
    )


@lru_cache(maxsize=64)
def _fitted(
    data: str, mime: str, width: int | None, height: int | None, limits: ImageLimits
) -> tuple[str, str, int, int] | None:
    """What `fit` makes of an image: None when it fits as it is (or cannot be read). Kept by
    the base64 text itself, whose hash Python keeps: a request carrying the same screenshot
    every turn costs a lookup, not a decode."""
    if width is None or height is None:
        width, height = image_size(_head(data)) or (0, 0)
    if max(width, height) <= limits.max_edge and len(data) * 3 // 4 <= limits.max_bytes:
        return None
    try:
        raw, mime, width, height = shrink(base64.b64decode(data), mime, limits)
    except (ImageError, binascii.Error, ValueError):
        return None
    return base64.b64encode(raw).decode(), mime, width, height


def shrink(
    raw: bytes, mime: str, limits: ImageLimits, *, prove: bool = False
) -> tuple[bytes, str, int, int]:
    """`raw` (an image of type `mime`) within `limits`: (bytes, type, width, height); the very
    bytes when they fit already.

    Args:
        raw: The image.
        mime: Its media type.
        limits: What to fit it in.
        prove: Decode it even when it fits, to prove it whole (a damaged or cut-short image
            raises); an image that does not fit is decoded, so proved, anyway.

    Raises:
        ImageError: Pillow cannot read it as an image.
    """
    size = image_size(raw)
    fits = size is not None and max(size) <= limits.max_edge and len(raw) <= limits.max_bytes
    if fits and not prove:
        return raw, mime, *size  # type: ignore[misc]
    if size is not None and image_type(raw) != "image/jpeg":
        # Refused by its header, before Pillow opens it: past 89 million pixels its `open`
        # warns of a decompression bomb (`DecompressionBombWarning`, on stderr or a test's
        # summary) about an image moot refuses anyway.
        _check_pixels(*size)
    from PIL import Image, UnidentifiedImageError  # lazily: ~30 ms, and rarely needed

    try:
        image = Image.open(io.BytesIO(raw), formats=DECODED_FORMATS)
        edge = limits.max_edge
        if image.format == "JPEG":
            # Decoded at the smallest scale (1/2, 1/4, 1/8) still at least the size it is
            # going to: much faster than decoding every pixel and throwing 3 in 4 away.
            scale = min(1.0, edge / max(image.size))
            image.draft("RGB", (math.ceil(image.width * scale), math.ceil(image.height * scale)))
        else:
            _check_pixels(image.width, image.height)
        image.load()
    except ImageTooLarge:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ImageError(str(exc) or type(exc).__name__) from None
    except Image.DecompressionBombError as exc:
        raise ImageError(str(exc)) from None
    if fits:
        return raw, mime, image.width, image.height
    # Screenshots stay PNG while PNG fits; past that (or for photos) JPEG, then smaller, by
    # the square root of how far over the bytes are: one or two encodes, not a ladder.
    edge = min(edge, max(image.size))
    scale = edge / max(image.size)
    # A PNG's bytes shrink about as its pixels do: one already too large at this size would
    # only be encoded to be thrown away.
    lossless = image.format in ("PNG", "GIF") and len(raw) * scale * scale < limits.max_bytes
    while True:
        image.thumbnail((edge, edge), Image.Resampling.LANCZOS)
        data, out_mime = _encode(image, lossless=lossless)
        if len(data) <= limits.max_bytes or edge <= 256:
            return data, out_mime, image.width, image.height
        if lossless and not _transparent(image):
            lossless = False
            continue
        edge = int(edge * max(0.5, min(0.9, (limits.max_bytes / len(data)) ** 0.5)))


def _check_pixels(width: int, height: int) -> None:
    """Raise `ImageTooLarge` for an image (not a JPEG) declaring more than
    `MAX_DECODED_PIXELS`."""
    if width * height > MAX_DECODED_PIXELS:
        raise ImageTooLarge(
            f"{width}x{height} is more pixels than moot decodes"
            f" ({MAX_DECODED_PIXELS // 1_000_000} million at most)"
        )


def _transparent(image: object) -> bool:
    from PIL import Image

    assert isinstance(image, Image.Image)
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def _encode(image: object, *, lossless: bool) -> tuple[bytes, str]:
    """PNG for a PNG or GIF (screenshots stay sharp) and anything transparent, JPEG for
    photos and for screenshots still too large."""
    from PIL import Image

    assert isinstance(image, Image.Image)
    out = io.BytesIO()
    if lossless or _transparent(image):
        image.save(out, "PNG")
        return out.getvalue(), "image/png"
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    rgb.save(out, "JPEG", quality=85)
    return out.getvalue(), "image/jpeg"
