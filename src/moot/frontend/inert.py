"""Untrusted text made inert for a terminal: no control character of it reaches one.

A file a tool read, a command's output, the model's text, a file or branch name can hold any
character; printed as it is, an ESC starts a sequence the terminal runs (`ESC ] 2 ;` the window
title, `ESC ] 52 ;` the clipboard, `ESC [ 2 J` a cleared screen to draw a forged prompt on), and
U+009B is CSI to a terminal that reads 8-bit controls. The controls are dropped, not shown: they
take no cell, so what is left lines up as before, and the rest of a sequence shows as text.
"""

from __future__ import annotations

import re
from typing import Any, TextIO, cast

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""The bidirectional controls (U+202E, right-to-left override, and the like): they reorder what
follows, so a command or a path would read otherwise than it runs."""
_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
"""Every C0 control, DEL, every C1 control and the bidirectional controls."""
_CONTROLS_BUT_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
"""The same but tab and newline, for text printed as lines."""


def inert(text: str) -> str:
    """`text` without any control character (a line of a drawn screen)."""
    return _CONTROLS.sub("", text) if _CONTROLS.search(text) else text


def inert_lines(text: str) -> str:
    """`text` without control characters but tabs and newlines (text printed as lines)."""
    return _CONTROLS_BUT_LINES.sub("", text) if _CONTROLS_BUT_LINES.search(text) else text


class InertWriter:
    """A text stream whose writes reach `file` inert (`inert_lines`): what a headless run
    prints on a terminal (the answer, refusals naming the model's arguments, notes) runs no
    sequence there. Everything but `write` is `file`'s own."""

    def __init__(self, file: TextIO) -> None:
        self.wrapped = file

    def write(self, text: str) -> int:
        self.wrapped.write(inert_lines(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


def on_terminal(file: TextIO) -> TextIO:
    """`file`, or an `InertWriter` over it when it is a terminal."""
    try:
        tty = file.isatty()
    except (AttributeError, ValueError):  # a closed or stand-in stream
        tty = False
    return cast("TextIO", InertWriter(file)) if tty else file
