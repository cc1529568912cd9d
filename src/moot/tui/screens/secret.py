"""A question whose answer is never shown: a key pasted for a provider (`/model`). Enter gives
what was typed, Esc cancels; the answer goes into no history."""

from __future__ import annotations

from textual import on
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from moot.tui.keys import bindings_for


class SecretScreen(ModalScreen[str | None]):
    """Ask for one secret."""

    DEFAULT_CSS = """
    SecretScreen { align: center middle; }
    SecretScreen > Vertical {
        width: 80%; max-width: 90; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS = bindings_for("picker")  # type: ignore[assignment]

    def __init__(self, question: str) -> None:
        super().__init__()
        self._question = question

    def compose(self):
        with Vertical():
            yield Static(self._question, classes="title")
            yield Input(password=True, placeholder="paste it here; Enter saves, Esc cancels")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_move(self, step: int) -> None:
        """The picker's up and down keys: nothing to move through here."""
