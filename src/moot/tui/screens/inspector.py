"""The event inspector: the stored events behind a node of the trace (or a whole run)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from moot.protocol import events as ev
from moot.tui.keys import bindings_for

MAX_CHARS = 200_000


def events_json(events: Sequence[ev.Event]) -> str:
    text = "\n".join(ev.event_to_json(e) for e in events)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "\n… (cut)"


class InspectorScreen(ModalScreen[None]):
    """Events as JSON, one per line; Esc closes."""

    DEFAULT_CSS = """
    InspectorScreen { align: center middle; }
    InspectorScreen > VerticalScroll {
        width: 95%; height: 90%; border: round $accent; background: $surface;
    }
    InspectorScreen .title { text-style: bold; }
    InspectorScreen .note { color: $text-muted; }
    """
    BINDINGS = bindings_for("inspector")  # type: ignore[assignment]

    def __init__(self, title: str, events: Sequence[ev.Event], *, note: str = "") -> None:
        """Args:
        title: What the events are (a run, a trace node's line).
        events: The events, in seq order.
        note: What was left out of them, shown under the title.
        """
        super().__init__()
        self._title, self._events, self._note = title, list(events), note

    def compose(self):
        with VerticalScroll():
            yield Static(f"{self._title}  ({len(self._events)} events)", classes="title")
            if self._note:
                yield Static(self._note, classes="note")
            from rich.syntax import Syntax  # pygments: loaded when an inspector opens

            body = Syntax(
                events_json(self._events), "json", word_wrap=True, background_color="default"
            )
            yield Static(body)
