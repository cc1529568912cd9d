"""Which front end `moot` starts, and how the plain REPL looks: accessible by default."""

from __future__ import annotations

import subprocess
import sys

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
            Look(plain=True, toolbar=False, dumb=True, why="the output is not a terminal"),
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


def test_choosing_the_front_end_loads_no_prompt_toolkit() -> None:
    """`moot.cli` asks `moot.repl.look` whether the app can run: that costs no prompt_toolkit
    (nor does `import moot.repl`); it loads only when the REPL starts."""
    code = (
        "import sys, moot.cli, moot.repl, moot.repl.look\n"
        "assert not [m for m in sys.modules if m.startswith('prompt_toolkit')]\n"
        "assert 'rich' not in sys.modules and 'textual' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_repl_loads_no_markdown_renderer_before_the_first_answer() -> None:
    """rich (markdown-it, pygments) loads at the first answer or in a thread after the prompt
    shows, never on the way to a ready prompt."""
    code = (
        "import sys, moot.repl.repl\n"
        "assert 'rich' not in sys.modules and 'pygments' not in sys.modules\n"
        "assert 'textual' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_repl_without_a_terminal_to_read_says_how_to_run_headless(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.cli import main

    monkeypatch.setenv("TERM", "dumb")  # `moot` alone chooses the REPL here
    for argv in (["--plain"], []):
        assert main([*argv, "--model", "scripted:none.yaml"]) == 2
        assert 'run a task headless with `moot -p "task"' in capsys.readouterr().err
