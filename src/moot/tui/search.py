"""`/search` in the app: mark the transcript's blocks that say a text and move between them.

Only mounted blocks are searched (the transcript is bounded; older history pages in with
"load earlier"); the command itself counts what the store holds beyond them.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from moot.frontend.display import key_argument
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.tool_block import ToolBlock

MATCH = "-search-match"
"""The class a matching block carries (styled in `app.tcss`)."""


def block_text(widget: Widget) -> str:
    """What a transcript block says, as plain text."""
    text = getattr(widget, "text", None)  # answers and thinking keep their source
    if isinstance(text, str):
        return text
    if isinstance(widget, ToolBlock):
        return f"{widget.tool} {key_argument(widget.arguments, widget.workspace)}\n{widget.content}"
    if isinstance(widget, Static):
        content = widget.content
        if isinstance(content, Text):
            return content.plain
        if isinstance(content, str):
            return content
        markup = getattr(content, "markup", None)  # a rich Markdown (a command's answer)
        return markup if isinstance(markup, str) else ""
    return ""


class TranscriptSearch:
    """The marks of the last search; the same text again moves to the next match."""

    def __init__(self) -> None:
        self.text = ""
        self.at = -1

    def run(self, chat: ChatPane, text: str) -> int:
        """Mark the blocks that say `text` (case-insensitive) and scroll to one: the first,
        or the next when `text` is what was searched last. Empty `text` clears the marks."""
        for block in chat.query(f".{MATCH}"):
            block.remove_class(MATCH)
        wanted = text.lower()
        if not wanted:
            self.text, self.at = "", -1
            return 0
        found = [block for block in chat.children if wanted in block_text(block).lower()]
        for block in found:
            block.add_class(MATCH)
        if not found:
            return 0
        self.at = (self.at + 1) % len(found) if wanted == self.text else 0
        self.text = wanted
        chat.release_anchor()  # stay at the match while the answer goes on
        chat.scroll_to_widget(found[self.at], animate=False, top=True)
        return len(found)
