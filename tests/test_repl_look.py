"""Which front end `moot` starts, and how the plain REPL looks: accessible by default."""

from __future__ import annotations

import pytest

from moot.repl.look import Look, app_unfit, choose_look


class Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


TTY, PIPE = Stream(True), Stream(False)


@pytest.mark.parametrize(
    ("environ", "stdin", "stdout", "why"),
    [
        ({"TERM": "xterm-256color"}, TTY, TTY, None),
        ({"TERM": "dumb"}, TTY, TTY, "TERM=dumb"),
        ({"TERM": "unknown"}, TTY, TTY, "TERM=unknown"),
        ({}, TTY, TTY, "TERM=(unset)"),
        ({"TERM": "xterm"}, TTY, PIPE, "the output is not a terminal"),
        # No terminal at all: neither front end can ask; the app says to use -p.
        ({"TERM": "xterm"}, PIPE, PIPE, None),
    ],
)
def test_moot_starts_the_repl_where_the_app_cannot_run(
    environ: dict[str, str], stdin: Stream, stdout: Stream, why: str | None
) -> None:
    assert app_unfit(environ, stdin, stdout) == why


@pytest.mark.parametrize(
    ("environ", "stdout", "settings", "flag", "expected"),
    [
        ({"TERM": "xterm"}, TTY, {}, True, Look(plain=False, toolbar=True)),
        ({"TERM": "xterm"}, TTY, {}, False, Look(plain=False, toolbar=False)),
        ({"TERM": "xterm"}, TTY, {"repl": {"toolbar": False}}, True, Look(False, False)),
        (
            {"TERM": "dumb"},
            TTY,
            {},
            True,
            Look(plain=True, toolbar=False, dumb=True, why="TERM=dumb"),
        ),
        (
            {"TERM": "xterm", "NO_COLOR": "1"},
            TTY,
            {},
            True,
            Look(plain=True, toolbar=False, why="NO_COLOR is set"),
        ),
        ({"TERM": "xterm", "NO_COLOR": ""}, TTY, {}, True, Look(plain=False, toolbar=True)),
        (
            {"TERM": "xterm"},
            PIPE,
            {},
            True,
            Look(plain=True, toolbar=False, why="the output is not a terminal"),
        ),
        (
            {"TERM": "xterm"},
            TTY,
            {"repl": {"plainOutput": True}},
            True,
            Look(plain=True, toolbar=False, why="repl.plainOutput is set"),
        ),
    ],
)
def test_the_look_is_plain_for_dumb_terminals_no_color_pipes_and_the_setting(
    environ: dict[str, str], stdout: Stream, settings: dict, flag: bool, expected: Look
) -> None:
    assert choose_look(environ, stdout, settings, toolbar_flag=flag) == expected
