"""The small blocks of the transcript: the person's turns, thinking, notices and errors.

Each is one `Static` (cheap to lay out: Textual has no widget virtualization, so every mounted
widget costs a reflow). Nested blocks (a peer's work under the call that made it) carry a
`depth-N` class that indents them.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.color import Color
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from moot.protocol.messages import Attachment
from moot.tui.keys import bindings_for

MAX_DEPTH_CLASS = 4


def depth_class(depth: int) -> str:
    return f"depth-{min(depth, MAX_DEPTH_CLASS)}"


class Block(Static):
    """A block of the transcript; `seq` is the event it shows (history pages load before it)."""

    DEFAULT_CSS = """
    Block { width: 1fr; height: auto; padding: 0 1; }
    Block.depth-1 { margin-left: 2; }
    Block.depth-2 { margin-left: 4; }
    Block.depth-3 { margin-left: 6; }
    Block.depth-4 { margin-left: 8; }
    """

    def __init__(self, content: object = "", *, seq: int = 0, depth: int = 0, **kw: object) -> None:
        super().__init__(content, **kw)  # type: ignore[arg-type]
        self.seq = seq
        # Not styled yet: its styles are worked out once, when it mounts (styling an unmounted
        # block here cost ~0.65 ms each: 130 ms for a resumed session's 200 blocks).
        self.add_class(depth_class(depth), update=False)


class UserBlock(Block):
    """What the person said."""

    DEFAULT_CSS = """
    UserBlock { color: $text; background: $boost; border-left: thick $accent; margin-top: 1; }
    """

    def __init__(
        self,
        text: str,
        *,
        agent: str = "",
        seq: int = 0,
        files: Sequence[tuple[str, str, bool]] = (),
        attachments: Sequence[str] = (),
        pictures: Sequence[Text | None] = (),
    ) -> None:
        """`files`: what the message attached (`@path`): path, note, and whether it was;
        `attachments`: a line for each of its images and PDFs (`attach.placeholders`);
        `pictures`: the thumbnail under each of those lines (`halfcell_picture`), if any."""
        label = Text()
        if agent:
            label.append(f"to {agent}: ", style="dim")
        label.append(text)
        for path, note, attached in files:
            label.append("\n")
            label.append(f"@{path}", style="bold" if attached else "dim strike")
            label.append(f"  {note or 'attached'}", style="dim")
        for index, line in enumerate(attachments):
            label.append("\n")
            label.append(line, style="dim")
            picture = pictures[index] if index < len(pictures) else None
            if picture is not None:
                label.append("\n")
                label.append_text(picture)
        super().__init__(label, seq=seq)


def halfcell_picture(attachment: Attachment) -> Text | None:
    """An image's thumbnail in half cells (`thumbnails.halfcells`: `▀`, the upper pixel's
    colour on the lower's); None for a PDF or what cannot be drawn. Pillow is imported here,
    only when the setting (`ui.imageThumbnails`) is on and a message has an image."""
    from moot.frontend.thumbnails import halfcells

    rows = halfcells(attachment)
    if rows is None:
        return None
    picture = Text()
    for number, row in enumerate(rows):
        if number:
            picture.append("\n")
        for top, bottom in row:
            picture.append("▀", Style(color=Color.from_rgb(*top), bgcolor=Color.from_rgb(*bottom)))
    return picture


class PeerCallBlock(Block):
    """One agent calling another: the message, as the callee reads it."""

    DEFAULT_CSS = """
    PeerCallBlock { color: $text-muted; border-left: thick $secondary; }
    """

    def __init__(self, caller: str, callee: str, message: str, *, seq: int, depth: int) -> None:
        text = Text()
        text.append(f"{caller} → {callee}: ", style="bold")
        text.append(message)
        super().__init__(text, seq=seq, depth=depth)


class ThinkingBlock(Block):
    """The model's reasoning, folded to one line; click or Enter to unfold."""

    DEFAULT_CSS = """
    ThinkingBlock { color: $text-muted; text-style: italic; }
    ThinkingBlock:focus { background: $boost; }
    """
    can_focus = True
    BINDINGS = bindings_for("thinking")  # type: ignore[assignment]

    def __init__(self, *, seq: int = 0, depth: int = 0) -> None:
        super().__init__("", seq=seq, depth=depth)
        self.text = ""
        self.expanded = False

    def add(self, text: str) -> None:
        self.text += text
        self._show()

    def _show(self) -> None:
        if self.expanded:
            self.update(Text("▾ thinking\n" + self.text))
        else:
            words = len(self.text.split())
            self.update(Text(f"▸ thinking ({words} words)"))

    def on_click(self) -> None:
        self.action_fold()

    def action_fold(self) -> None:
        self.expanded = not self.expanded
        self._show()


class NoticeBlock(Block):
    """Something moot tells the person (a mode switch, a commit, a command's output)."""

    DEFAULT_CSS = """
    NoticeBlock { color: $text-muted; }
    NoticeBlock.-warning { color: $warning; }
    """


class ErrorBlock(Block):
    """An error, where it happened."""

    DEFAULT_CSS = """
    ErrorBlock { color: $error; border-left: thick $error; }
    """
