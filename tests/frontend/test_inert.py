"""Untrusted text made inert for a terminal (`moot.frontend.inert`)."""

from __future__ import annotations

import io

from moot.frontend.inert import InertWriter, inert, inert_lines, on_terminal
from moot.repl.paint import strip_escapes


def test_no_control_character_survives_and_the_rest_stays_as_text() -> None:
    text = "a\x1b]52;c;eA==\x07b\x9b2Jc\rd\x7fe\tf\ng"
    assert inert(text) == "a]52;c;eA==b2Jcdefg"
    assert inert_lines(text) == "a]52;c;eA==b2Jcde\tf\ng"


def test_bidirectional_controls_cannot_reorder_a_command_or_a_path() -> None:
    # Shown with the override, `echo safe <RLO>~ fr- mr` would read as `echo safe rm -rf ~`.
    for override in ("\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200f", "\u061c"):
        text = f"notes{override}txt.sh"
        assert inert(text) == inert_lines(text) == strip_escapes(text) == "notestxt.sh"


def test_a_terminal_gets_an_inert_writer_and_a_pipe_the_stream_itself() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal, pipe = Terminal(), io.StringIO()
    written = on_terminal(terminal)
    assert isinstance(written, InertWriter)
    written.write("x\x1b[2Jy\n")
    assert terminal.getvalue() == "x[2Jy\n"
    assert on_terminal(pipe) is pipe
