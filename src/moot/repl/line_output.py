"""Where the REPL's prompts draw, by look: the terminal as prompt_toolkit drives it (styled),
only what editing a line needs (plain, on a terminal), or text alone (dumb).

The plain look on a terminal (`NO_COLOR`, `repl.plainOutput`) keeps prompt_toolkit's line
editing (arrows, history, `ctrl+r`, backspace that visibly erases), because its dumb prompt
echoes only the character before the cursor (`helo`, backspace, `lo` shows `helollo`). But
prompt_toolkit's renderer also hides and shows the cursor around every redraw, toggles
autowrap, sets and resets attributes, asks where the cursor is and switches the cursor keys'
mode: a screen reader or a terminal logger gets those for every key. `LineOutput` drops them
and keeps the cursor moves and erasures that put the edited line right, and bracketed paste
(invisible; without it a pasted block would be sent line by line).
"""

from __future__ import annotations

from typing import TextIO

from prompt_toolkit.cursor_shapes import CursorShape
from prompt_toolkit.output import ColorDepth, Output
from prompt_toolkit.output.plain_text import PlainTextOutput
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.styles import Attrs

from moot.repl.look import Look


class LineOutput(Vt100_Output):
    """A terminal's output with the moves and erasures a line editor needs and nothing more."""

    def hide_cursor(self) -> None:
        pass  # the cursor stays shown: nothing flickers when only a line is redrawn

    def show_cursor(self) -> None:
        pass

    def set_cursor_shape(self, cursor_shape: CursorShape) -> None:
        pass

    def reset_cursor_shape(self) -> None:
        pass

    def disable_autowrap(self) -> None:
        pass  # the renderer never writes past the last column, and moves with \r after it

    def enable_autowrap(self) -> None:
        pass

    def set_attributes(self, attrs: Attrs, color_depth: ColorDepth) -> None:
        pass  # no colour, no bold: the plain look's text is text

    def reset_attributes(self) -> None:
        pass

    def set_title(self, title: str) -> None:
        pass

    def clear_title(self) -> None:
        pass

    def reset_cursor_key_mode(self) -> None:
        pass

    def enter_alternate_screen(self) -> None:
        pass  # the REPL writes into scrollback, never a screen of its own

    def quit_alternate_screen(self) -> None:
        pass

    def enable_mouse_support(self) -> None:
        pass

    def disable_mouse_support(self) -> None:
        pass

    def ask_for_cpr(self) -> None:
        pass

    @property
    def responds_to_cpr(self) -> bool:
        return False  # never asked: the plain look reserves no room for a menu below


def prompt_output(look: Look, stdout: TextIO) -> Output | None:
    """The output the REPL's prompts draw on; None keeps prompt_toolkit's own (styled).

    Args:
        look: How the REPL looks here (`moot.repl.look.choose_look`).
        stdout: The terminal (or the pipe, for a dumb look).
    """
    if look.dumb:
        # prompt_toolkit still writes "show the cursor" when it builds a prompt, even for a
        # dumb terminal: an output that writes text only keeps every escape out.
        return PlainTextOutput(stdout)
    if look.plain:
        return LineOutput.from_pty(stdout)
    return None
