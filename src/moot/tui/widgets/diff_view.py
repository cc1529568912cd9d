"""A unified diff, coloured and syntax-highlighted, capped at `CAP` lines until "show all"."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.containers import Vertical
from textual.widgets import Static

from moot.tui.keys import key_of

CAP = 40


def _lexer_for(diff: str) -> str:
    """The language of the file a diff changes, from its `+++ b/path` line."""
    from rich.syntax import Syntax  # pygments: not before the app's first paint

    for line in diff.splitlines()[:4]:
        if line.startswith("+++ ") or line.startswith("--- "):
            path = line[4:].strip()
            if path and path != "/dev/null":
                return Syntax.guess_lexer(path.removeprefix("b/").removeprefix("a/"))
    return "text"


def diff_text(diff: str, limit: int | None = CAP) -> Text:
    """The diff as text: each changed line's code highlighted for its language, on a green
    (added) or red (removed) ground; file and hunk lines bold and cyan."""
    from rich.syntax import Syntax  # pygments (see `_lexer_for`)

    lines = diff.splitlines()
    shown = lines if limit is None else lines[:limit]
    syntax = Syntax("", _lexer_for(diff), theme="ansi_dark", background_color="default")
    out = Text()
    for line in shown:
        if line.startswith("+++") or line.startswith("---"):
            out.append(line, style="bold")
        elif line.startswith("@@"):
            out.append(line, style="cyan")
        elif line[:1] in ("+", "-", " "):
            mark, code = line[:1], line[1:]
            ground = {"+": "on #0b3d0b", "-": "on #4a0d0d", " ": ""}[mark]
            colour = {"+": "green", "-": "red", " ": "dim"}[mark]
            piece = Text()
            piece.append(mark, style=f"bold {colour} {ground}".strip())
            body = syntax.highlight(code) if code.strip() else Text(code)
            body.rstrip()
            if ground:
                body.stylize(ground)
            piece.append_text(body)
            out.append_text(piece)
        else:
            out.append(line, style="dim")
        out.append("\n")
    out.rstrip()
    return out


class DiffView(Vertical):
    """A diff, capped; `show all` (a click on the note, or its tool block's key) shows the rest."""

    DEFAULT_CSS = """
    DiffView { height: auto; border-left: tall $success 50%; padding-left: 1; }
    DiffView > .more { color: $text-muted; text-style: underline; }
    """

    def __init__(self, diff: str, *, cap: int = CAP) -> None:
        super().__init__()
        self.diff = diff
        self.cap = cap
        self.all_shown = len(diff.splitlines()) <= cap

    def compose(self):
        yield Static(diff_text(self.diff, None if self.all_shown else self.cap), classes="body")
        if not self.all_shown:
            hidden = len(self.diff.splitlines()) - self.cap
            key = key_of("tool", "show_all")
            yield Static(f"… {hidden} more lines: {key} or a click shows all", classes="more")

    def show_all(self) -> None:
        if self.all_shown:
            return
        self.all_shown = True
        body = self.query(".body")
        if body:  # else not composed yet: compose shows it all
            body.first(Static).update(diff_text(self.diff, None))
            self.query(".more").remove()

    def on_click(self, event: events.Click) -> None:
        self.show_all()
        event.stop()  # a click inside the diff is not one on its tool block (which would fold)
