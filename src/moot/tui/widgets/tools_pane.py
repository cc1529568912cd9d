"""The tools pane: every tool call and approval of the session, newest at the bottom; the
highlighted one's arguments, result or diff below the list."""

from __future__ import annotations

import json
from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.containers import Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from moot.frontend.display import key_argument, one_line
from moot.protocol import events as ev
from moot.tui.widgets.diff_view import diff_text

MAX_ROWS = 500
"""Rows kept (the oldest go first): the transcript and the store keep the rest."""
EMPTY_DETAIL = "the highlighted call's arguments, result or diff show here"


class ToolsPane(Vertical):
    """Tool calls and approvals, one row each, and the detail of the highlighted one."""

    DEFAULT_CSS = """
    ToolsPane { height: 1fr; border-top: solid $panel; }
    ToolsPane > .title { color: $text-muted; text-style: bold; padding: 0 1; }
    ToolsPane > OptionList { height: 1fr; border: none; }
    ToolsPane > VerticalScroll { height: 1fr; border-top: solid $panel; padding: 0 1; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self._rows: dict[str, ev.Event] = {}
        self._ids: list[str] = []
        self.workspace = ""
        """The session's workspace: calls show paths inside it relative to it."""

    def compose(self):
        yield Static("tools", classes="title")
        yield OptionList()
        with VerticalScroll():
            yield Static(Text(EMPTY_DETAIL, style="dim"), classes="detail")

    def take(self, event: ev.Event) -> None:
        row = self._row(event)
        if row is not None:
            self._put(row[0], event, row[1])

    def show_history(self, events: Iterable[ev.Event]) -> None:
        """Take a resumed session's events into an empty pane: the rows `take` would make,
        added to the list at once (the list lays out all its lines again for each row added:
        one by one, hundreds of rows would take seconds)."""
        labels: dict[str, Text] = {}
        for event in events:
            row = self._row(event)
            if row is None:
                continue
            key, labels[key] = row
            if key not in self._rows:
                self._ids.append(key)
            if not isinstance(event, ev.ApprovalDecided):  # the detail stays the question's
                self._rows[key] = event
            if len(self._ids) > MAX_ROWS:  # the oldest goes first, as `_put` lets it go
                del self._rows[self._ids.pop(0)]
        self.query_one(OptionList).add_options(Option(labels[k], id=k) for k in self._ids)

    def _row(self, event: ev.Event) -> tuple[str, Text] | None:
        """The row an event makes or changes: its key and label; None: no row."""
        match event:
            case ev.ToolStarted():
                key = f"{event.call_id}/{event.tool_call_id}"
                return key, Text.assemble(("… ", "yellow"), self._call_label(event))
            case ev.ToolFinished():
                key = f"{event.call_id}/{event.tool_call_id}"
                mark = ("✗ ", "red") if event.is_error else ("✓ ", "green")
                start = self._rows.get(key)
                label = self._call_label(start) if isinstance(start, ev.ToolStarted) else event.tool
                return key, Text.assemble(mark, label)
            case ev.ApprovalRequested():
                key = f"{event.call_id}/approval/{event.tool_call_id}"
                return key, Text.assemble(("? ", "bold yellow"), f"{event.agent}: {event.tool}")
            case ev.ApprovalDecided():
                # The question's row says how it was answered (a rule's answer asked nothing).
                key = f"{event.call_id}/approval/{event.tool_call_id}"
                asked = self._rows.get(key)
                if not isinstance(asked, ev.ApprovalRequested):
                    return None
                how = (
                    ("✓ ", "green", f"allowed ({event.scope})")
                    if event.approved
                    else ("✗ ", "red", "refused")
                )
                what = f"{asked.agent}: {asked.tool} {how[2]}"
                return key, Text.assemble((how[0], how[1]), what)
        return None

    def _call_label(self, event: ev.ToolStarted) -> str:
        key = key_argument(event.arguments, self.workspace)
        return f"{event.tool} {one_line(key, 30)}" if key else event.tool

    def _put(self, key: str, event: ev.Event, label: Text) -> None:
        options = self.query_one(OptionList)
        if key in self._rows:
            if not isinstance(event, ev.ApprovalDecided):  # the detail stays the question's
                self._rows[key] = event
            options.replace_option_prompt(key, label)
            return
        self._rows[key] = event
        self._ids.append(key)
        options.add_option(Option(label, id=key))
        if len(self._ids) > MAX_ROWS:
            gone = self._ids.pop(0)
            self._rows.pop(gone, None)
            options.remove_option(gone)

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, message: OptionList.OptionHighlighted) -> None:
        event = self._rows.get(message.option.id or "")
        detail = self.query_one(".detail", Static)
        match event:
            case ev.ToolFinished():
                diff = event.display.get("diff")
                body = (
                    diff_text(diff, None)
                    if isinstance(diff, str) and diff
                    else Text(event.content[:20_000])
                )
                detail.update(body)
            case ev.ToolStarted():
                detail.update(json.dumps(event.arguments, indent=1, ensure_ascii=False)[:20_000])
            case ev.ApprovalRequested():
                detail.update(event.preview or json.dumps(event.arguments, indent=1))
