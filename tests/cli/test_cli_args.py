"""Argument parsing: a lean parser (only the commands named) reads what it can, and whatever it
refuses the whole parser reads again, so help and every message stay the whole parser's."""

from __future__ import annotations

import contextlib
import io

import pytest

from moot.cli.args import COMMANDS, parse


def outcome(argv: list[str]) -> tuple[object, str, str]:
    """What `parse` returns (or the exit code it ends with), and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(parse(argv))
        except SystemExit as exc:
            result = exc.code
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [["--help"], ["-ch"], ["-c", "-h"]])
def test_help_lists_every_command_even_when_the_flag_hides_among_others(argv: list[str]) -> None:
    code, printed, _ = outcome(argv)

    assert code == 0
    listed = printed.partition("COMMAND")[2]
    assert all(f"    {name} " in listed for name in COMMANDS), printed


def test_a_commands_own_help_shows_its_actions() -> None:
    code, printed, _ = outcome(["sessions", "-h"])

    assert code == 0
    assert all(a in printed for a in ("list", "show", "export", "delete", "fork", "prune"))


def test_a_word_that_is_no_command_is_refused_with_every_choice_named() -> None:
    """`foo` is the task; `bar` is where a command belongs, though `sessions` is named later."""
    code, _, err = outcome(["foo", "bar", "sessions"])

    assert code == 2
    assert "invalid choice: 'bar'" in err
    assert all(f"'{name}'" in err for name in COMMANDS), err


def test_a_named_command_and_the_app_parse_as_before() -> None:
    listing, _, _ = outcome(["sessions", "list", "--all", "--limit", "3"])
    app, _, _ = outcome(["--plain", "fix it"])
    options, _, err = outcome(["sessions", "list", "--bogus"])

    assert isinstance(listing, dict) and isinstance(app, dict)
    assert (listing["command"], listing["action"], listing["all"], listing["limit"]) == (
        "sessions", "list", True, 3,
    )  # fmt: skip
    assert (app["command"], app["plain"], app["task"]) == (None, True, "fix it")
    assert options == 2 and "unrecognized arguments: --bogus" in err
