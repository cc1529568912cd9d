"""An MCP server's question (`mcp_question_asked`) in the app: its message, a field for each
value it wants (`moot.frontend.mcp_form`), and three answers: accept (with the fields,
checked as the schema says), decline, cancel (Esc). The screen gives the op that answers;
it closes by itself when the question is answered elsewhere or withdrawn (`withdraw`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events, on
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from moot.frontend.mcp_form import form_content, form_fields
from moot.protocol import events as ev
from moot.protocol import ops
from moot.tui.keys import bindings_for
from moot.tui.widgets.approval import GRACE_S


class McpQuestionScreen(ModalScreen[ops.AnswerMcpQuestion | None]):
    """Ask one server's question; dismissed with the answer (None: withdrawn)."""

    DEFAULT_CSS = """
    McpQuestionScreen { align: center middle; }
    McpQuestionScreen > Vertical {
        width: 80%; max-width: 100; height: auto; max-height: 90%;
        border: round $warning; background: $surface; padding: 0 1;
    }
    McpQuestionScreen .title { text-style: bold; color: $warning; }
    McpQuestionScreen .problem { color: $error; height: 1; }
    McpQuestionScreen VerticalScroll { height: auto; max-height: 20; }
    McpQuestionScreen Horizontal { height: auto; }
    """
    BINDINGS = bindings_for("picker")  # type: ignore[assignment]
    # No focus until the person pauses (`on_mount`); "" turns Textual's auto focus off, which
    # None would inherit from the app ("*": the first field, filled by keys meant for the prompt).
    AUTO_FOCUS = ""

    def __init__(
        self, question: ev.McpQuestionAsked, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.question = question
        self.fields = form_fields(question.schema)
        self._clock = clock  # the app's (`AppOptions.clock`), which tests move by hand

    def compose(self):
        with Vertical():
            yield Static(f"MCP server {self.question.server} asks", classes="title", markup=False)
            yield Static(self.question.message, markup=False)
            with VerticalScroll():
                for index, field in enumerate(self.fields):
                    yield Static(field.label(), markup=False)
                    default = "" if field.default is None else str(field.default)
                    yield Input(value=default, placeholder=_hint(field.kind), id=f"field-{index}")
            yield Static("", classes="problem", markup=False)
            with Horizontal():
                yield Button("Accept", id="accept", variant="primary")
                yield Button("Decline", id="decline")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        # Keys the person was typing into the prompt as the question came must not fill it in
        # (or accept it with Enter): the fields take the focus only after a pause, as the
        # approval pane does (`GRACE_S`).
        self._last_key = self._clock()
        self.set_timer(GRACE_S, self._take_focus)

    def on_key(self, event: events.Key) -> None:
        if self.focused is None:  # typed on from the prompt: no answer, and a later focus
            self._last_key = self._clock()
            event.stop()

    def _take_focus(self) -> None:
        idle = self._clock() - self._last_key
        if idle < GRACE_S:  # the person is still typing: wait for a pause
            self.set_timer(GRACE_S - idle + 0.01, self._take_focus)
            return
        inputs = self.query(Input)
        (inputs.first() if inputs else self.query_one("#accept", Button)).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "accept":
            self._accept()
        elif event.button.id == "decline":
            self.dismiss(ops.AnswerMcpQuestion(ask_id=self.question.ask_id, action="decline"))
        else:
            self.action_cancel()

    def _accept(self) -> None:
        texts = {
            f.name: self.query_one(f"#field-{i}", Input).value for i, f in enumerate(self.fields)
        }
        try:
            content = form_content(self.fields, texts)
        except ValueError as exc:
            self.query_one(".problem", Static).update(str(exc))
            return
        self.dismiss(
            ops.AnswerMcpQuestion(ask_id=self.question.ask_id, action="accept", content=content)
        )

    def action_cancel(self) -> None:
        self.dismiss(ops.AnswerMcpQuestion(ask_id=self.question.ask_id, action="cancel"))

    def action_move(self, step: int) -> None:
        """The picker's up and down keys move between the fields."""
        if step > 0:
            self.focus_next()
        else:
            self.focus_previous()

    def withdraw(self) -> None:
        """The question was answered elsewhere, or the server stopped waiting: close."""
        if self.app.screen is self:
            self.dismiss(None)
        # Under another screen (help), it stays until that closes; its answer is then refused
        # (`op_refused`: no such question waits), which changes nothing.


def _hint(kind: str) -> str:
    return {"boolean": "yes or no", "integer": "a whole number", "number": "a number"}.get(kind, "")
