"""The app and the tty, in a real one (tmux): the first run's demo end to end, running
without the alternate screen and leaving the conversation in the scrollback, mouse capture off
and on, 16 colours for `TERM=xterm`, and greys only under `NO_COLOR`.

Each test starts a plain shell in tmux and types the `moot` command into it, so what moot
leaves behind is read from the shell's own screen and scrollback afterwards. Nothing sleeps to
wait for the UI: every wait polls `tmux capture-pane` with a deadline.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

from test_tui_tmux import (  # noqa: F401 (the same skip; the fixture `tty` is)
    SCRIPT,
    Terminal,
    pytestmark,
    terminal,
)

MOOT = Path(sys.executable).parent / "moot"
SGR = re.compile(r"\x1b\[([0-9;]*)m")


@pytest.fixture
def tty(request: pytest.FixtureRequest) -> Terminal:
    """A tmux server of its own, with a clean environment (`test_tui_tmux.terminal`)."""
    return request.getfixturevalue("terminal")


def shell(tty: Terminal, cwd: Path, command: str, size: tuple[int, int] = (120, 36)) -> None:
    """Start a shell in tmux and type `command` into it, then `echo EXIT=$?`."""
    width, height = size
    tty.tmux(
        "new-session", "-d", "-s", tty.name, "-x", str(width), "-y", str(height),
        "-c", str(cwd), "bash --norc --noprofile",
    )  # fmt: skip
    tty.keys("-l", f"echo before-moot; {command}; echo EXIT=$?")
    tty.keys("Enter")


def ready(screen: str) -> bool:
    """The status line is drawn (the command line typed into the shell names the model too)."""
    return " tok  $" in screen


def exited(tty: Terminal) -> str:
    """The whole scrollback once the shell printed moot's exit code."""
    tty.wait_for(lambda s: re.search(r"^EXIT=\d", s, re.M) is not None, "moot's exit")
    history = tty.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", tty.name)
    assert re.search(r"^EXIT=0$", history, re.M), history
    return history


def display(tty: Terminal, what: str) -> str:
    return tty.tmux("display", "-p", "-t", tty.name, what).strip()


def approve_until(tty: Terminal, seen: str) -> None:
    """Press y until the approval is taken (keys within the grace period are ignored)."""
    end = time.monotonic() + 20
    while seen not in tty.screen():
        assert time.monotonic() < end, tty.screen()
        tty.keys("y")
        try:
            tty.wait_for(lambda s: seen in s, seen, 0.6)
        except AssertionError:
            continue


def repo_with_greeting(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "greeting.py").write_text('def greet(name):\n    return "hi " + name\n')
    script = tmp_path / "e2e-script.yaml"
    script.write_text(SCRIPT)
    return repo, script


def test_the_first_run_demo_in_a_real_terminal(tty: Terminal, tmp_path: Path) -> None:
    home = Path(tty.env["MOOT_HOME"])
    work = tmp_path / "work"
    work.mkdir()
    shell(tty, work, str(MOOT), size=(100, 30))
    tty.wait_for(lambda s: "first run" in s and "no key for" in s, "the first-run screen")
    # Nothing can start without a key: the key field has focus; five tabs reach the demo.
    tty.keys("Tab", "Tab", "Tab", "Tab", "Tab", "Enter")
    tty.wait_for(lambda s: "asks to run edit" in s, "the demo's edit asking")
    approve_until(tty, "allowed by you")
    tty.wait_for(lambda s: "That was the demo" in s, "the demo's answer")
    assert "hello" in (home / "data" / "demo" / "greeting.py").read_text()
    assert not list(work.iterdir())  # the person's own directory was never touched
    tty.keys("C-c")
    tty.keys("C-c")
    exited(tty)
    assert not (home / "config" / "settings.json").exists()  # the demo remembers no model


def test_without_the_alternate_screen_the_conversation_stays_in_the_scrollback(
    tty: Terminal, tmp_path: Path
) -> None:
    repo, script = repo_with_greeting(tmp_path)
    shell(tty, repo, f"{MOOT} --no-alt-screen --model scripted:{script}")
    tty.wait_for(ready, "the app below the prompt")
    assert "before-moot" in tty.screen()
    assert display(tty, "#{alternate_on}") == "0"
    tty.keys("-l", "make greet say hello")
    tty.keys("Enter")
    tty.wait_for(lambda s: "asks to run edit" in s, "the edit's approval")
    approve_until(tty, "allowed by you")
    tty.wait_for(lambda s: "greet now says hello" in s, "the answer")
    tty.keys("C-c")
    tty.keys("C-c")
    history = exited(tty)
    after = history[history.index("before-moot") :]
    # The conversation, rendered as markdown, between the command and its exit code.
    for line in ("moot session ses_", "make greet say hello", "read result", "edit result"):
        assert line in after, history
    assert after.index("Done: greet now says hello.") < after.index("EXIT=0")


def test_inline_with_the_scrollback_off_leaves_the_last_frame(
    tty: Terminal, tmp_path: Path
) -> None:
    repo, script = repo_with_greeting(tmp_path)
    shell(tty, repo, f"{MOOT} --no-alt-screen --scrollback off --model scripted:{script}")
    tty.wait_for(ready, "the app")
    tty.keys("C-c")
    tty.keys("C-c")
    history = exited(tty)
    assert "moot session" not in history
    assert ready(history)  # the last frame, status line and all, stayed on the screen


def test_mouse_capture_starts_off_and_f4_switches_it(tty: Terminal, tmp_path: Path) -> None:
    repo, script = repo_with_greeting(tmp_path)
    shell(tty, repo, f"{MOOT} --no-mouse --model scripted:{script}")
    tty.wait_for(ready, "the app")
    assert display(tty, "#{alternate_on}") == "1"

    def mouse_is(flag: str) -> None:
        end = time.monotonic() + 10
        while display(tty, "#{mouse_any_flag}") != flag:
            assert time.monotonic() < end, f"mouse flag never became {flag}"
            time.sleep(0.05)  # polling another process, bounded

    mouse_is("0")
    tty.keys("F4")
    mouse_is("1")
    tty.keys("F4")
    mouse_is("0")
    tty.keys("C-c")
    tty.keys("C-c")
    exited(tty)


def colours(tty: Terminal) -> list[str]:
    """Every SGR parameter list on the screen."""
    screen = tty.tmux("capture-pane", "-p", "-e", "-t", tty.name)
    return SGR.findall(screen)


@pytest.mark.parametrize(
    ("env", "check"),
    [
        # 16 colours: no 256-colour (38;5) or truecolour (38;2) sequence at all.
        ("TERM=xterm", "sixteen"),
        # NO_COLOR: truecolour sequences, all grey (Textual's monochrome filter).
        ("COLORTERM=truecolor NO_COLOR=1", "grey"),
    ],
    ids=["TERM=xterm", "NO_COLOR"],
)
def test_sixteen_colours_and_no_color_are_respected(
    tty: Terminal, tmp_path: Path, env: str, check: str
) -> None:
    repo, script = repo_with_greeting(tmp_path)
    shell(tty, repo, f"env {env} {MOOT} --model scripted:{script}")
    tty.wait_for(ready, "the app")
    params = colours(tty)
    assert params
    extended = [p for p in params if re.match(r"(38|48);[25];", p)]
    if check == "sixteen":
        assert extended == [], extended
        # The shipped theme's 16-colour stand-in draws on the terminal's own background; the
        # truecolour theme rounded to 16 colours would paint it black (40) from the first line.
        first = tty.tmux("capture-pane", "-p", "-e", "-t", tty.name).splitlines()[0]
        assert "40" not in SGR.findall(first), repr(first)
    else:
        assert extended
        for p in extended:
            r, g, b = (int(x) for x in p.split(";")[2:5])
            assert r == g == b, p
    tty.keys("C-c")
    tty.keys("C-c")
    exited(tty)
