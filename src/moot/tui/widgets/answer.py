"""An agent's answer: streamed through `Markdown.get_stream()`, then folded into one light
widget.

While the model streams, a `Markdown` widget takes the coalesced text through a
`MarkdownStream` (which joins what arrives faster than it can render). When the model turn
ends, the Markdown tree (a widget per paragraph, ~0.45 MB per message) is replaced by one
`Static` that renders the same markdown: a finished message costs one widget.

The markdown modules (markdown_it, Textual's `Markdown`, rich's) load at the first answer, not
before the app's first paint; `tui/warm.py` loads them in a thread once the prompt shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.widgets import Static

from moot.tui.widgets.blocks import depth_class

if TYPE_CHECKING:
    from rich.markdown import Markdown as RichMarkdown
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

FREEZE_CHARS = 2000
"""Past this much text in the live `Markdown`, its whole paragraphs fold into a `Static` and a
new `Markdown` goes on streaming: a `Markdown` is a widget per paragraph, and each append lays
them all out again, so a long answer would slow down as it grows."""


def _markdown() -> Markdown:
    from textual.widgets import Markdown  # markdown_it: ~40 ms, not before the first paint

    return Markdown()


def _rendered(text: str) -> RichMarkdown:
    from rich.markdown import Markdown as RichMarkdown  # markdown_it (see `_markdown`)

    return RichMarkdown(text)


class AnswerBlock(Vertical):
    """One model turn's text, streaming or finished."""

    DEFAULT_CSS = """
    AnswerBlock { height: auto; padding: 0 1; }
    AnswerBlock.depth-1 { margin-left: 2; }
    AnswerBlock.depth-2 { margin-left: 4; }
    AnswerBlock.depth-3 { margin-left: 6; }
    AnswerBlock.depth-4 { margin-left: 8; }
    AnswerBlock > Markdown { margin: 0; padding: 0; }
    AnswerBlock > .agent { color: $text-muted; }
    AnswerBlock > Static.done { height: auto; }
    """

    def __init__(self, agent: str = "", *, seq: int = 0, depth: int = 0) -> None:
        super().__init__()
        self.seq = seq
        self.depth = depth
        self.agent = agent
        self.text = ""
        self.finished = False
        self._markdown: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._live = ""
        """The text in the live `Markdown` (what is not yet folded)."""
        self.add_class(depth_class(depth), update=False)  # styled once, when it mounts

    def compose(self):
        if self.agent and self.depth:
            yield Static(self.agent, classes="agent")
        if self.finished:
            yield Static(_rendered(self.text), classes="done")
        else:
            self._markdown = _markdown()
            yield self._markdown

    async def write(self, text: str) -> None:
        """Append streamed text."""
        self.text += text
        if self._markdown is None or self.finished:
            return
        if self._stream is None:
            self._stream = self._markdown.get_stream(self._markdown)
        await self._stream.write(text)
        self._live += text
        if len(self._live) > FREEZE_CHARS:
            await self._freeze()

    async def _freeze(self) -> None:
        """Fold the live Markdown's whole paragraphs into a Static (never inside a fence)."""
        cut = self._live.rfind("\n\n")
        head, rest = self._live[:cut], self._live[cut + 2 :]
        if cut <= 0 or head.count("```") % 2 or self._markdown is None or self._stream is None:
            return
        await self._stream.stop()
        old, self._markdown = self._markdown, _markdown()
        await self.mount_all(
            [Static(_rendered(head), classes="done part"), self._markdown], before=old
        )
        await old.remove()
        self._live = rest
        self._stream = self._markdown.get_stream(self._markdown)
        if rest:
            await self._stream.write(rest)

    async def finish(self, text: str | None = None) -> None:
        """The turn's text is complete: stop streaming and fold into one widget."""
        if self.finished:
            return
        self.finished = True
        if text is not None:
            self.text = text
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._markdown is not None:
            await self._markdown.remove()
            self._markdown = None
        await self.query("Static.part").remove()
        if self.is_mounted:
            await self.mount(Static(_rendered(self.text), classes="done"))

    @classmethod
    def finished_answer(
        cls, text: str, agent: str = "", *, seq: int = 0, depth: int = 0
    ) -> AnswerBlock:
        """A block for text already complete (history from the store)."""
        block = cls(agent, seq=seq, depth=depth)
        block.text, block.finished = text, True
        return block
