"""What an image's first bytes say of it: its type (PNG, JPEG, GIF or WebP, by its magic
bytes) and its width and height, read from its header without decoding a pixel.

One reader for every layer that asks: attaching a file (`moot.workspace.attachments`), `read`
of an image (`moot.tools.read`), what an image costs a request and whether it fits
(`moot.providers.images`), what a chip says of it (`moot.frontend.attach`). It imports
nothing of moot, so the lowest of them may import it.
"""

from __future__ import annotations

import struct

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


DECODED_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
"""The formats moot lets Pillow decode (`Image.open(..., formats=...)`): the four it takes in.
Pillow tries every decoder it has on bytes it is given, a PSD's, a TIFF's, an ICNS's too, so
a file named `.png` would reach a decoder nobody meant to run on repository files."""


def image_type(head: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP file, from its magic bytes; None for
    anything else."""
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None when `head` is none of them
    or is cut short before its size (a JPEG's may sit past its EXIF: pass all of it)."""
    try:
        match image_type(head):
            case "image/png" if head[12:16] == b"IHDR":
                return struct.unpack(">II", head[16:24])
            case "image/gif":
                return struct.unpack("<HH", head[6:10])
            case "image/webp":
                return _webp_size(head)
            case "image/jpeg":
                return _jpeg_size(head)
    except struct.error:  # cut short
        return None
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":  # lossy: after the start code
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and head[20:21] == b"\x2f" and len(head) >= 25:  # lossless
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(head) >= 30:  # extended: the canvas
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    """From the first start-of-frame segment, walking the segments before it."""
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill bytes before a marker
            at += 1
            continue
        if 0xD0 <= marker <= 0xD9 or marker == 0x01:  # no length of their own
            at += 2
            continue
        (length,) = struct.unpack(">H", head[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # SOF0..SOF15
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None
