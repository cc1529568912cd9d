"""An image's type and size from its first bytes (`moot.image_header`): the one reader that
attaching, `read`, the providers' fitting and the front ends' chips share."""

from __future__ import annotations

import struct

from images import gif, jpeg, png
from moot.image_header import image_size, image_type


def _webp(chunk: bytes, body: bytes) -> bytes:
    return b"RIFF\x00\x00\x00\x00WEBP" + chunk + struct.pack("<I", len(body)) + body


def test_image_types_by_magic_bytes() -> None:
    assert image_type(b"\x89PNG\r\n\x1a\n....") == "image/png"
    assert image_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert image_type(b"GIF89a") == "image/gif"
    assert image_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert image_type(b"RIFF\x00\x00\x00\x00WAVE") is None
    assert image_type(b"%PDF-1.4") is None


def test_the_size_of_each_kind_is_read_from_its_header() -> None:
    assert image_size(png(200, 100)) == (200, 100)
    assert image_size(gif(5, 7)) == (5, 7)
    assert image_size(jpeg(640, 480)) == (640, 480)
    extended = b"\x00" * 4 + (1279).to_bytes(3, "little") + (719).to_bytes(3, "little")
    assert image_size(_webp(b"VP8X", extended)) == (1280, 720)
    lossless = b"\x2f" + ((300 - 1) | (150 - 1) << 14).to_bytes(4, "little")
    assert image_size(_webp(b"VP8L", lossless)) == (300, 150)
    lossy = b"\x00\x00\x00\x9d\x01\x2a" + struct.pack("<HH", 64, 48)
    assert image_size(_webp(b"VP8 ", lossy)) == (64, 48)


def test_a_jpegs_fill_bytes_and_markers_without_length_are_walked_over() -> None:
    """Fill bytes (0xFF) may stand before any marker (ITU T.81 B.1.1.2); a reader that took
    the second 0xFF for a marker read a length from the wrong bytes."""
    whole = jpeg(320, 240)
    padded = whole[:2] + b"\xff\xff\xff" + whole[2:]
    assert image_size(padded) == (320, 240)


def test_a_header_cut_short_or_of_no_image_has_no_size() -> None:
    assert image_size(png(8, 8)[:20]) is None
    assert image_size(jpeg()[:12]) is None
    assert image_size(b"GIF89a\x01") is None
    assert image_size(_webp(b"VP8X", b"\x00" * 4)) is None
    assert image_size(b"%PDF-1.4\n" + b"\x00" * 40) is None
    assert image_size(b"") is None
