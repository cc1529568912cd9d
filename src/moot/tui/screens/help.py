"""`f1` and `/help`: every key (from the one table) and every slash command."""

from __future__ import annotations

from rich.table import Table
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from moot.commands.registry import Registry
from moot.tui.keys import KEYS, PLACES, bindings_for


def help_table(registry: Registry) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for where, place in PLACES.items():
        table.add_row(f"[u]{place}[/u]", "")
        for key in KEYS:
            if key.where == where:
                table.add_row(key.key, key.description)
    table.add_row("[u]commands[/u]", "")
    for command in registry:
        name = f"/{command.name} {command.arguments}".strip()
        table.add_row(name, command.description)
    return table


class HelpScreen(ModalScreen[None]):
    """Every key and command; Esc or q closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 100; height: 80%; border: round $accent; background: $surface;
        padding: 0 1;
    }
    """
    BINDINGS = bindings_for("help")  # type: ignore[assignment]

    def __init__(self, registry: Registry) -> None:
        super().__init__()
        self._registry = registry

    def compose(self):
        with VerticalScroll():
            yield Static(help_table(self._registry))
