"""A list to choose from (models, sessions, themes): Enter picks, Esc cancels, typing filters."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from moot.tui.keys import bindings_for


class PickerScreen(ModalScreen[str | None]):
    """Choose one of (value, label) pairs."""

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > Vertical {
        width: 80%; max-width: 90; height: auto; max-height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    PickerScreen OptionList { height: auto; max-height: 20; border: none; }
    """
    BINDINGS = bindings_for("picker")  # type: ignore[assignment]

    def __init__(self, title: str, choices: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self._title, self._choices = title, list(choices)

    def compose(self):
        with Vertical():
            yield Static(self._title, classes="title")
            yield Input(placeholder="type to filter")
            yield OptionList(*[Option(label, id=value) for value, label in self._choices])

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0 if options.option_count else None

    def action_move(self, step: int) -> None:
        """Up and down move through the list while the filter keeps the focus."""
        options = self.query_one(OptionList)
        if options.option_count:
            now = options.highlighted if options.highlighted is not None else -step
            options.highlighted = (now + step) % options.option_count

    @on(Input.Changed)
    def _filter(self, event: Input.Changed) -> None:
        needle = event.value.lower()
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(
            Option(label, id=value) for value, label in self._choices if needle in label.lower()
        )
        options.highlighted = 0 if options.option_count else None

    @on(Input.Submitted)
    def _submit(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
