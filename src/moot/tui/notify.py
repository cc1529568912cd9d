"""Telling a person who looks elsewhere that an approval waits: the bell and a desktop
notification through the terminal (OSC 9, which iTerm2, WezTerm, kitty, Ghostty and Windows
Terminal show, and OSC 777, which foot, rxvt and Ghostty show).

The runtime runs the `Notification` hook for every approval it asks (`core/approve.py`); the app
does not run it again, it only rings and notifies, and only while the terminal is not focused.

What goes into the sequence comes partly from outside moot (an agent's name from a project's
settings, a tool's name from an MCP server): control characters would end the sequence early and
let the rest act on the terminal, so they are removed, and the text is capped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

MAX_BODY = 160
"""Characters of the notification's text kept."""
GAP_S = 1.0
"""At most one notification this often: parallel peers asking at once ring once."""


def clean(text: str, limit: int = MAX_BODY) -> str:
    """`text` without control characters (C0, DEL, C1) and no longer than `limit`."""
    kept = "".join(c if c.isprintable() and not 0x80 <= ord(c) < 0xA0 else " " for c in text)
    kept = " ".join(kept.split())
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def sequences(body: str, *, title: str = "moot", tmux: bool = False) -> str:
    """The bell-free OSC 9 and OSC 777 notifications of `body` (cleaned here).

    OSC 9 bodies that start with a digit and `;` are read as progress reports by some terminals
    (ConEmu), so the body always starts with `title: `. Inside tmux the sequences are wrapped to
    pass through to the outer terminal (tmux drops them unless `allow-passthrough` is on).
    """
    body, title = clean(body), clean(title, 32).replace(";", ",")
    payload = f"\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07"
    if tmux:
        payload = "\x1bPtmux;" + payload.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return payload


class Notifier:
    """Rings and notifies, at most once every `GAP_S`.

    Args:
        write: Writes to the terminal (the driver's `write`); None when there is none.
        bell: Rings the terminal's bell.
        clock: Seconds, monotonic (tests move it by hand).
    """

    def __init__(
        self,
        write: Callable[[str], None] | None,
        bell: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write, self._bell, self._clock = write, bell, clock
        self._last = -GAP_S
        self.sent: list[str] = []
        """The notification texts sent (tests read them)."""

    def notify(self, body: str) -> bool:
        """Ring and notify with `body`, unless one went out less than `GAP_S` ago."""
        now = self._clock()
        if now - self._last < GAP_S:
            return False
        self._last = now
        self.sent.append(clean(body))
        self._bell()
        if self._write is not None:
            self._write(sequences(body, tmux=bool(os.environ.get("TMUX"))))
        return True
