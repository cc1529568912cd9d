"""The app end to end in a real terminal (tmux): start `moot` with the scripted provider in a
temporary repository, type a task, approve the edit with `y`, see the file change on disk,
resize the window, quit with ctrl+c twice, and find no process left behind.

Nothing sleeps to wait for the UI: every wait polls `tmux capture-pane` (or the process
table) until what it waits for is there, with a deadline.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

SCRIPT = """\
turns:
  - text: "Let me look at the file."
    tool_calls:
      - {name: read, arguments: {path: greeting.py}}
  - text: "Changing the greeting."
    tool_calls:
      - {name: edit, arguments: {path: greeting.py, old: "hi ", new: "hello, "}}
  - text: "Done: greet now says **hello**."
"""

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and not os.environ.get("CI"),
    reason="tmux is not installed (CI installs it)",
)


class Terminal:
    """One tmux session running one command."""

    def __init__(self, name: str, socket: Path) -> None:
        self.name, self.socket = name, socket

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args], check=True, capture_output=True, text=True
        ).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, found: Callable[[str], bool], what: str, deadline_s: float = 30) -> str:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            screen = self.screen()
            if found(screen):
                return screen
            time.sleep(0.05)  # polling another process, bounded by the deadline
        raise AssertionError(f"never saw {what}; the screen was:\n{self.screen()}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)


@pytest.fixture
def terminal(tmp_path: Path):  # type: ignore[no-untyped-def]
    socket = tmp_path / "tmux.sock"
    term = Terminal("moot-e2e", socket)
    yield term
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)


def test_a_task_typed_approved_and_quit_in_a_real_terminal(
    terminal: Terminal, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "greeting.py").write_text('def greet(name):\n    return "hi " + name\n')
    script = tmp_path / "e2e-script.yaml"
    script.write_text(SCRIPT)
    moot = Path(sys.executable).parent / "moot"
    env = {
        "MOOT_HOME": str(tmp_path / "home"),
        "TERM": "xterm-256color",
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
    }
    command = f"{moot} --model scripted:{script}"
    terminal.tmux(
        "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40", "-c", str(repo),
        *[arg for k, v in env.items() for arg in ("-e", f"{k}={v}")],
        command,
    )  # fmt: skip
    terminal.tmux("set-option", "-t", terminal.name, "remain-on-exit", "on")
    terminal.wait_for(lambda s: "scripted:" in s and "default" in s, "the status line")

    terminal.keys("make greet say hello")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "asks to run edit" in s, "the edit's approval")
    assert "hi " in (repo / "greeting.py").read_text()  # nothing changed before the answer

    # `y` counts only once the person has paused and the grace period is over: press it until
    # the approval is taken (each try polls; keys in the grace period are ignored by design).
    end = time.monotonic() + 20
    while "allowed by you" not in terminal.screen():
        assert time.monotonic() < end, terminal.screen()
        terminal.keys("y")
        try:
            terminal.wait_for(lambda s: "allowed by you" in s, "the approval taken", 0.6)
        except AssertionError:
            continue
    terminal.wait_for(lambda s: "greet now says hello" in s, "the answer")
    assert (repo / "greeting.py").read_text() == 'def greet(name):\n    return "hello, " + name\n'

    terminal.tmux("resize-window", "-t", terminal.name, "-x", "80", "-y", "24")
    narrow = terminal.wait_for(
        lambda s: len(s.splitlines()[0]) <= 80 and "tools" not in s, "the narrow layout"
    )
    assert "scripted:" in narrow.splitlines()[-1]  # the status line is still there

    terminal.keys("C-c")
    terminal.keys("C-c")
    terminal.wait_for(
        lambda s: terminal.tmux("display-message", "-p", "-t", terminal.name, "#{pane_dead}")
        .strip()
        == "1",
        "moot to exit",
    )
    status = terminal.tmux("display-message", "-p", "-t", terminal.name, "#{pane_dead_status}")
    assert status.strip() == "0"
    left = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True).stdout
    assert left == "", f"processes left behind: {left}"
