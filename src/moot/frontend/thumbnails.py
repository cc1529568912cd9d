"""Thumbnails of a message's images in the chat, on a terminal with a graphics protocol.

Off unless the `ui.imageThumbnails` setting is on: an image drawn into the scrollback cannot
be taken back, and a terminal that only claims a protocol shows its escape as noise. The
protocol is read from the terminal's own variables (`TERM`, `TERM_PROGRAM`, kitty's
`KITTY_WINDOW_ID`): kitty's (kitty, Ghostty; PNG only, sent as it is) and iTerm2's inline
images (iTerm2, WezTerm; any format). Sixel terminals are named but get no thumbnail: sixel
needs the image decoded and re-encoded, which no dependency here does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from moot.frontend.attach import from_attachment
from moot.protocol.messages import Attachment

COLUMNS = 24
"""A thumbnail's width, in terminal cells."""
_CHUNK = 4096
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
    if attached.kind != "image" or not attached.detail or protocol not in ("kitty", "iterm2"):
        return None
    width, height = (int(n) for n in attached.detail.split("x"))
    rows = max(1, math.ceil(COLUMNS * height / max(width, 1) / 2))  # a cell is twice as tall
    data = attachment.data
    if protocol == "iterm2":
        return (
            f"\x1b]1337;File=inline=1;size={attached.size};width={COLUMNS};height={rows};"
            f"preserveAspectRatio=1:{data}\x07\n"
        )
    if attachment.mime_type != "image/png":
        return None
    pieces = [data[i : i + _CHUNK] for i in range(0, len(data), _CHUNK)] or [""]
    out = []
    for index, piece in enumerate(pieces):
        more = int(index < len(pieces) - 1)
        head = f"a=T,f=100,c={COLUMNS},r={rows},q=2,m={more}" if index == 0 else f"m={more}"
        out.append(f"\x1b_G{head};{piece}\x1b\\")
    return "".join(out) + "\n"
