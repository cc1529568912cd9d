"""Text the app draws reaches the terminal as text: no control character of it, ever.

What the app shows comes from places nobody vouches for: a file a tool read, a command's output,
the model's text, a file name, a branch name in `.git/HEAD`, a link in the model's markdown.
Rich strips only BEL, backspace, VT, FF and CR from text, and Textual (8.2) writes each
segment's text into the terminal as it is, so an ESC in any of them was a sequence the terminal
ran: `ESC ] 2 ;` set the window title, `ESC ] 52 ;` the person's clipboard (a command to paste
into a shell), `ESC [ 2 J` cleared the screen to draw a forged approval. Every character the app
draws passes through `Strip.render` (the compositor's only way to the driver), so that is where
the controls go: every C0 control, DEL and C1 (U+009B is CSI to terminals that
read 8-bit controls). They take no cell (Rich counts them zero wide), so the layout is unchanged.
The app's own sequences (styles, links, notifications, mouse, clipboard copies it was asked for)
are made around the text, or written to the driver directly, and pass.

Textual is pinned to 8.2.x (`moot.tui.terminal` says why privates are used there too);
`tests/tui/test_tui_inert_text.py` runs the real app in tmux to hold this.
"""

from __future__ import annotations

from rich.color import ColorSystem
from rich.console import Console
from textual.strip import Strip

from moot.frontend.inert import inert


def _render(self: Strip, console: Console) -> str:
    """`Strip.render`, with each segment's text and link made inert first."""
    if self._render_cache is None:
        color_system = console._color_system or ColorSystem.TRUECOLOR
        parts = []
        for text, style, _ in self._segments:
            text = inert(text)
            if style is None:
                parts.append(text)
                continue
            if style._link and inert(style._link) != style._link:
                style = style.update_link(inert(style._link))
            parts.append(self.render_style(style, text, color_system=color_system))
        self._render_cache = "".join(parts)
    return self._render_cache


def install() -> None:
    """Make every strip the app draws render its text inert; idempotent."""
    if getattr(Strip.render, "__moot_inert__", False):
        return
    _render.__moot_inert__ = True  # type: ignore[attr-defined]
    Strip.render = _render  # type: ignore[method-assign]
