"""Thumbnails of a message's images in the chat, on a terminal with a graphics protocol.

Off unless the `ui.imageThumbnails` setting is on: an image drawn into the scrollback cannot
be taken back, and a terminal that only claims a protocol shows its escape as noise. The
protocol is read from the terminal's own variables (`TERM`, `TERM_PROGRAM`, kitty's
`KITTY_WINDOW_ID`): kitty's (kitty, Ghostty; a PNG as it is), iTerm2's inline images
(iTerm2, WezTerm; any format) and sixel (foot, mlterm, a `TERM` naming it). Sixel, and kitty
for another format than PNG, need the image decoded and encoded again: with Pillow, imported
only then; without it those get no thumbnail.

The app draws into its own screen, not the scrollback: there a thumbnail is `halfcells`,
two pixels a cell (the upper half's colour in front of the lower's: `▀`), which any terminal
with colours shows.
"""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import Mapping
from typing import Any

from moot.frontend.attach import from_attachment
from moot.image_header import DECODED_FORMATS
from moot.protocol.messages import Attachment

PROTOCOLS = ("kitty", "iterm2", "sixel")
SIXEL_WIDTH, SIXEL_COLOURS = 192, 32
"""A sixel thumbnail's width in pixels (about `COLUMNS` cells) and palette."""
COLUMNS = 24
"""A thumbnail's width, in terminal cells."""
HALFCELL_ROWS = 12
"""A half-cell thumbnail's height at most, in terminal cells (a tall image is narrower)."""
_CHUNK = 4096
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
"""What an escape sequence may carry of an attachment's data: an MCP server's is any string
(kept as it came when it is not base64), and a BEL or ESC in it would end the sequence."""
"""kitty takes a payload in pieces of at most this many base64 characters."""


def graphics_protocol(env: Mapping[str, str]) -> str | None:
    """`kitty`, `iterm2` or `sixel`: what the terminal draws images with; None when unknown."""
    term = env.get("TERM", "")
    program = env.get("TERM_PROGRAM", "")
    if env.get("KITTY_WINDOW_ID") or "kitty" in term or program == "ghostty":
        return "kitty"
    if program in ("iTerm.app", "WezTerm"):
        return "iterm2"
    if "sixel" in term or term.startswith(("mlterm", "foot")):
        return "sixel"
    return None


def thumbnail(attachment: Attachment, protocol: str | None) -> str | None:
    """The escape sequence that draws `attachment` `COLUMNS` cells wide, then a line end;
    None when this protocol cannot draw it (a PDF, a JPEG on kitty, sixel)."""
    attached = from_attachment(attachment)
    if attached.kind != "image" or not attached.detail or protocol not in PROTOCOLS:
        return None
    if not _BASE64.fullmatch(attachment.data):
        return None
    width, height = (int(n) for n in attached.detail.split("x"))
    rows = max(1, math.ceil(COLUMNS * height / max(width, 1) / 2))  # a cell is twice as tall
    data = attachment.data
    if protocol == "iterm2":
        return (
            f"\x1b]1337;File=inline=1;size={attached.size};width={COLUMNS};height={rows};"
            f"preserveAspectRatio=1:{data}\x07\n"
        )
    if protocol == "sixel":
        return _sixel(attachment)
    png = data if attachment.mime_type == "image/png" else _as_png(attachment)
    return None if png is None else _kitty(png, rows)


RGB = tuple[int, int, int]


def halfcells(attachment: Attachment, columns: int = COLUMNS) -> list[list[tuple[RGB, RGB]]] | None:
    """The image as rows of cells, each cell the colours of its upper and lower pixel, at most
    `columns` wide and `HALFCELL_ROWS` high (its shape kept: a cell is twice as tall as wide);
    None for a PDF, without Pillow, or for what cannot be decoded."""
    if not attachment.is_image:
        return None
    image = _image(attachment)
    if image is None:
        return None
    from PIL import Image  # imported by `_image` already

    width, height = image.size
    rows = max(1, min(HALFCELL_ROWS, round(columns * height / max(width, 1) / 2)))
    columns = max(1, min(columns, round(rows * 2 * width / max(height, 1))))
    # Each cell the mean of the pixels it covers: a sharp edge stays sharp where it falls.
    small = image.resize((columns, rows * 2), resample=Image.Resampling.BOX)
    data = small.tobytes()  # RGB, three bytes a pixel

    def pixel(x: int, y: int) -> RGB:
        at = 3 * (y * columns + x)
        return data[at], data[at + 1], data[at + 2]

    return [[(pixel(x, 2 * y), pixel(x, 2 * y + 1)) for x in range(columns)] for y in range(rows)]


def _kitty(data: str, rows: int) -> str:
    """A PNG (base64) in kitty's graphics protocol, in pieces of at most `_CHUNK`."""
    pieces = [data[i : i + _CHUNK] for i in range(0, len(data), _CHUNK)] or [""]
    out = []
    for index, piece in enumerate(pieces):
        more = int(index < len(pieces) - 1)
        head = f"a=T,f=100,c={COLUMNS},r={rows},q=2,m={more}" if index == 0 else f"m={more}"
        out.append(f"\x1b_G{head};{piece}\x1b\\")
    return "".join(out) + "\n"


def _image(attachment: Attachment) -> Any | None:
    """The attachment decoded by Pillow (RGB); None without Pillow or for a bad image."""
    try:
        from PIL import Image  # only for a thumbnail that needs decoding
    except ImportError:
        return None
    try:
        data = base64.b64decode(attachment.data)
        opened = Image.open(io.BytesIO(data), formats=DECODED_FORMATS)
        opened.draft("RGB", (SIXEL_WIDTH, SIXEL_WIDTH))  # a JPEG decoded at 1/8 scale: ~10x faster
        image = opened.convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    image.thumbnail((SIXEL_WIDTH, SIXEL_WIDTH))
    return image


def _as_png(attachment: Attachment) -> str | None:
    image = _image(attachment)
    if image is None:
        return None
    out = io.BytesIO()
    image.save(out, format="PNG")
    return base64.b64encode(out.getvalue()).decode()


def _sixel(attachment: Attachment) -> str | None:
    """The image as sixels: a palette of `SIXEL_COLOURS`, six pixel rows a band."""
    image = _image(attachment)
    if image is None:
        return None
    indexed = image.quantize(colors=SIXEL_COLOURS)
    width, height = indexed.size
    pixels = indexed.tobytes()  # a palette index a byte
    palette = indexed.getpalette() or []
    out = [f'\x1bPq"1;1;{width};{height}']
    for colour in range(len(palette) // 3):
        red, green, blue = (v * 100 // 255 for v in palette[colour * 3 : colour * 3 + 3])
        out.append(f"#{colour};2;{red};{green};{blue}")
    for top in range(0, height, 6):
        rows = [pixels[y * width : (y + 1) * width] for y in range(top, min(top + 6, height))]
        for colour in sorted({p for row in rows for p in row}):
            bits = [
                chr(63 + sum(1 << dy for dy, row in enumerate(rows) if row[x] == colour))
                for x in range(width)
            ]
            out.append(f"#{colour}{_runs(''.join(bits))}$")
        out.append("-")
    return "".join(out) + "\x1b\\\n"


def _runs(sixels: str) -> str:
    """Runs of one sixel written `!count`-first, as the format allows."""
    return re.sub(r"(.)\1{3,}", lambda m: f"!{len(m.group(0))}{m.group(1)}", sixels)
