"""`PaneLookup`: the app's panes, found once and kept.

A query walks the DOM in order, and the side panes come after every block of the transcript
(hundreds), for each event: each pane is found once and kept while it stays mounted (a session
switch composes new ones, found again at their first use).
"""

from __future__ import annotations

from typing import TypeVar

from textual.dom import DOMNode
from textual.widget import Widget

from moot.tui.widgets.approval import ApprovalPane
from moot.tui.widgets.chat import ChatPane
from moot.tui.widgets.prompt import PromptInput
from moot.tui.widgets.status_line import StatusLine
from moot.tui.widgets.tools_pane import ToolsPane
from moot.tui.widgets.trace import TracePane
from moot.tui.widgets.working import WorkingLine

PaneT = TypeVar("PaneT", bound=Widget)


class PaneLookup:
    """The panes under `root` (the app), by kind.

    Raises `textual.css.query.NoMatches` for a pane not mounted (the side panes and the
    approval pane before the first paint is over; every pane once the app is closing).
    """

    def __init__(self, root: DOMNode) -> None:
        self._root = root
        self._found: dict[type[Widget], Widget] = {}

    def pane(self, kind: type[PaneT]) -> PaneT:
        found = self._found.get(kind)
        if found is None or not found.is_attached:
            found = self._found[kind] = self._root.query_one(kind)
        return found  # type: ignore[return-value]

    @property
    def chat(self) -> ChatPane:
        return self.pane(ChatPane)

    @property
    def approvals(self) -> ApprovalPane:
        return self.pane(ApprovalPane)

    @property
    def trace(self) -> TracePane:
        return self.pane(TracePane)

    @property
    def tools(self) -> ToolsPane:
        return self.pane(ToolsPane)

    @property
    def prompt(self) -> PromptInput:
        return self.pane(PromptInput)

    @property
    def status(self) -> StatusLine:
        return self.pane(StatusLine)

    @property
    def working(self) -> WorkingLine:
        return self.pane(WorkingLine)
