"""Colour and marks for the REPL's lines, or none of them in the plain look.

A few SGR codes by hand rather than rich: the first lines print before the prompt is ready
(start-up is a benchmark) and rich's console costs ~40 ms to import. Colours are the 16 the
terminal's own theme defines, so they follow it.
"""

from __future__ import annotations

import re

from moot.frontend.inert import inert_lines

_SGR = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
_RESET = "\x1b[0m"
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
"""CSI sequences (colours, cursor moves) and OSC strings (titles, links, notifications)."""


def strip_escapes(text: str) -> str:
    """`text` without terminal escape sequences or control characters (tabs and newlines
    stay): what a tool or model printed must not move the cursor or retitle the terminal."""
    return inert_lines(_ESCAPES.sub("", text))  # then the lone controls, bidi ones included


class Paint:
    """Styles text for one look."""

    def __init__(self, *, plain: bool) -> None:
        self.plain = plain
        self.ok = "ok" if plain else "✓"
        self.failed = "failed" if plain else "✗"
        self.running = "running" if plain else "⋯"
        self.arrow = "->" if plain else "→"
        self.back = "<-" if plain else "←"
        self.ellipsis = "..." if plain else "…"

    def __call__(self, text: str, *styles: str) -> str:
        """`text` in `styles` (bold, dim, italic and the colour names), or as it is."""
        if self.plain or not styles or not text:
            return text
        codes = ";".join(_SGR[s] for s in styles)
        return f"\x1b[{codes}m{text}{_RESET}"

    def diff(self, diff: str) -> str:
        """A unified diff, its added lines green and removed ones red."""
        if self.plain:
            return diff
        out = []
        for line in diff.splitlines():
            if line.startswith(("+++", "---")):
                out.append(self(line, "bold"))
            elif line.startswith("+"):
                out.append(self(line, "green"))
            elif line.startswith("-"):
                out.append(self(line, "red"))
            elif line.startswith("@@"):
                out.append(self(line, "cyan"))
            else:
                out.append(line)
        return "\n".join(out)
