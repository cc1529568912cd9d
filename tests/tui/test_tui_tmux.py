"""The app end to end in a real terminal (tmux): start `moot` with the scripted provider in a
temporary repository, type a task, approve the edit with `y`, see the file change on disk,
resize the window, quit with ctrl+c twice, and find no process left behind.

Nothing sleeps to wait for the UI: every wait polls `tmux capture-pane` (or the process
table) until what it waits for is there, with a deadline.
"""

from __future__ import annotations

import os
import re
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

    def __init__(self, name: str, socket: Path, env: dict[str, str]) -> None:
        self.name, self.socket, self.env = name, socket, env

    def tmux(self, *args: str) -> str:
        # The server starts with this environment only: the test runner's own (COLUMNS and
        # LINES, which Textual would take over the terminal's real size) stays out.
        return subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            check=True,
            capture_output=True,
            text=True,
            env=self.env,
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
    env = {
        "MOOT_HOME": str(tmp_path / "home"),
        "TERM": "xterm-256color",
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if "PYTHONPATH" in os.environ:  # a worktree's own sources, over the shared editable install
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    term = Terminal("moot-e2e", socket, env)
    yield term
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)


def test_a_task_typed_approved_and_quit_in_a_real_terminal(
    terminal: Terminal, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "greeting.py").write_text('def greet(name):\n    return "hi " + name\n')
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    script = tmp_path / "e2e-script.yaml"
    script.write_text(SCRIPT)
    moot = Path(sys.executable).parent / "moot"
    exit_file = tmp_path / "exit-code"
    command = f"{moot} --model scripted:{script}; echo $? > {exit_file}"
    terminal.tmux(
        "new-session",
        "-d",
        "-s",
        terminal.name,
        "-x",
        "140",
        "-y",
        "40",
        "-c",
        str(repo / "docs"),
        command,
    )
    shown = tmp_path / "terminal.log"  # all the terminal was sent, what moot printed last too
    terminal.tmux("pipe-pane", "-t", terminal.name, f"cat >> {shown}")
    terminal.wait_for(lambda s: "scripted:" in s and "tools" in s, "the wide layout")

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
    # Started in docs/, moot worked in the whole repository (the workspace is the git root).
    changed = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True)
    assert changed.stdout.split() == ["M", "greeting.py"]

    terminal.tmux("resize-window", "-t", terminal.name, "-x", "80", "-y", "24")
    terminal.wait_for(
        lambda s: "tools" not in s and "scripted:" in (s.rstrip().splitlines() or [""])[-1],
        "the narrow layout, the status line still at the bottom",
    )

    assert _quit(terminal, exit_file) == "0"
    end = time.monotonic() + 5  # the shell that wrote the exit code ends just after it
    while left := subprocess.run(
        ["pgrep", "-f", str(script)], capture_output=True, text=True
    ).stdout:
        assert time.monotonic() < end, f"processes left behind: {left}"
        time.sleep(0.05)  # polling other processes, bounded
    # Quitting says which session it was and how to go on with it (it said nothing).
    assert re.search(r"moot: session ses_\w+; `moot -c` goes on with it", shown.read_text())


CONTINUE_SCRIPT = """\
turns:
  - text: "First answer: alpha."
  - text: "Second answer: beta."
"""


def _quit(terminal: Terminal, exit_file: Path) -> str:
    """ctrl+c twice; the exit code moot left."""
    terminal.keys("C-c")
    terminal.keys("C-c")
    end = time.monotonic() + 20
    while not exit_file.exists() or not exit_file.read_text().strip():
        assert time.monotonic() < end, f"moot did not exit:\n{terminal.screen()}"
        time.sleep(0.05)  # polling another process, bounded
    code = exit_file.read_text().strip()
    exit_file.unlink()
    # The shell that wrote the code ends its window, and with it the tmux session, a moment
    # later: a new session of the same name made before then is refused as a duplicate.
    while _has_session(terminal):
        assert time.monotonic() < end, "the tmux session outlived moot"
        time.sleep(0.02)  # polling another process, bounded
    return code


def _has_session(terminal: Terminal) -> bool:
    alive = subprocess.run(
        ["tmux", "-S", str(terminal.socket), "has-session", "-t", terminal.name],
        env=terminal.env,
        capture_output=True,
    )
    return alive.returncode == 0


def test_a_task_given_on_the_command_line_then_moot_c_goes_on_with_its_history(
    terminal: Terminal, tmp_path: Path
) -> None:
    """`moot "task"` opens the app and sends the task; `moot -c` opens that same session in
    the app with its history shown from the store, and the next turn goes on in it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    script = tmp_path / "continue-script.yaml"
    script.write_text(CONTINUE_SCRIPT)
    moot = Path(sys.executable).parent / "moot"
    exit_file = tmp_path / "exit-code"
    start = f"{moot} --model scripted:{script} 'say the first thing'; echo $? > {exit_file}"
    terminal.tmux(
        "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40", "-c", str(repo), start
    )
    terminal.wait_for(lambda s: "First answer: alpha." in s, "the task's answer")
    assert _quit(terminal, exit_file) == "0"

    again = f"{moot} -c; echo $? > {exit_file}"
    # The first app's exit ended that tmux session (its only window): a new one.
    terminal.tmux(
        "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40", "-c", str(repo), again
    )
    screen = terminal.wait_for(
        lambda s: "say the first thing" in s and "First answer: alpha." in s,
        "the earlier turn, shown from the store",
    )
    assert "Second answer" not in screen
    terminal.keys("and now the second")
    terminal.keys("Enter")
    terminal.wait_for(lambda s: "Second answer: beta." in s, "the next turn's answer")
    assert _quit(terminal, exit_file) == "0"

    listed = subprocess.run(
        [str(moot), "sessions", "list"],
        cwd=repo,
        env=terminal.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert listed.count("say the first thing") == 1, listed  # one session, continued


SLOW_LINES = "".join(f"line {i} of a slow answer\\n" for i in range(200))
PEER_SCRIPT = f"""\
turns:
  - tool_calls:
      - {{name: call_agent, arguments: {{agent_name: moot, message: help me}}}}
  - {{text: "{SLOW_LINES}", rate: 20, chunk_size: 4}}
"""


@pytest.mark.parametrize("how", ["SIGTERM", "the terminal closed (SIGHUP)"])
def test_a_signal_ends_the_app_as_quitting_does_and_the_turn_records_its_end(
    terminal: Terminal, tmp_path: Path, how: str
) -> None:
    """`kill`, or a terminal that went away, while a peer call runs: the app closes its
    session, so the callee's end, then the turn's, are recorded. Fails on the old code: the
    signal ended the process there and then, the run left open."""
    import signal

    from moot.store.sqlite import SQLiteStore

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    script = tmp_path / "peer.yaml"
    script.write_text(PEER_SCRIPT)
    moot = Path(sys.executable).parent / "moot"
    terminal.tmux(
        "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40", "-c", str(repo),
        f"exec {moot} --model scripted:{script}",
    )  # fmt: skip
    pid = int(terminal.tmux("display", "-p", "-t", terminal.name, "#{pane_pid}"))
    terminal.wait_for(lambda s: "scripted:" in s, "the app")
    terminal.keys("go")
    terminal.keys("Enter")
    db = tmp_path / "home" / "data" / "sessions.db"
    end = time.monotonic() + 30
    while True:  # polling another process, bounded by the deadline
        if db.exists():
            with SQLiteStore(db) as store:
                found = store.sessions()
                log = store.events(found[0].id) if found else []
            if any(e.kind == "text_delta" and e.parent_call_id for e in log):
                break  # the callee streams its answer
        assert time.monotonic() < end, terminal.screen()
        time.sleep(0.05)

    if how == "SIGTERM":
        os.kill(pid, signal.SIGTERM)
    else:
        terminal.tmux("kill-session", "-t", terminal.name)  # the pty closes: SIGHUP
    end = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and _state(pid) != "Z":
        assert time.monotonic() < end, "moot did not end"
        time.sleep(0.05)

    with SQLiteStore(db) as store:
        log = store.events(store.sessions()[0].id)
    assert [e.kind for e in log[-3:]] == ["agent_returned", "tool_finished", "turn_finished"]
    assert log[-1].stop_reason == "user_cancelled"  # type: ignore[attr-defined]


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0].decode()
    except OSError:
        return "gone"


def test_the_app_stopped_and_brought_back_with_fg_is_painted_whole(
    terminal: Terminal, tmp_path: Path
) -> None:
    """`kill -TSTP` stops the app (it binds no ctrl+z) and the shell takes the terminal; `fg`
    brings it back painted whole, the chat's answer included. Fails on the old code: Textual
    repainted only what changed after, the prompt."""
    import signal

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q"], check=True)
    script = tmp_path / "hello.yaml"
    script.write_text('turns:\n  - text: "hello from before the stop"\n')
    moot = Path(sys.executable).parent / "moot"
    terminal.tmux(
        "new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40", "-c", str(repo),
        "env PS1='shell$ ' MOOT_RESIDENT=0 bash --norc --noprofile",
    )  # fmt: skip
    shell = int(terminal.tmux("display", "-p", "-t", terminal.name, "#{pane_pid}"))
    terminal.wait_for(lambda s: "shell$" in s, "the shell")
    terminal.keys(f"{moot} --model scripted:{script}", "Enter")
    terminal.wait_for(lambda s: "scripted:" in s and "shell$" not in s, "the app")
    terminal.keys("hi", "Enter")
    terminal.wait_for(lambda s: "hello from before the stop" in s, "the answer")
    [app] = [int(pid) for pid in Path(f"/proc/{shell}/task/{shell}/children").read_text().split()]

    os.kill(app, signal.SIGTSTP)
    terminal.wait_for(lambda s: "Stopped" in s and "hello from" not in s, "the shell's screen")
    terminal.keys("fg", "Enter")

    terminal.wait_for(
        lambda s: "hello from before the stop" in s and "╭" in s and "shell$" not in s,
        "the app painted whole",
    )
    terminal.keys("C-c")
    terminal.keys("C-c")
    terminal.wait_for(lambda s: s.rstrip().endswith("shell$"), "the shell again")
