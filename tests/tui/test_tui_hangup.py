"""The app (and the REPL) as a process whose terminal goes away: each ends, as quitting does,
instead of living on (`moot.tui.hangup`).

Real processes on real pseudo-terminals: the terminal goes away when the test closes its end.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from tests.pty_moot import terminal_env

from moot.cli import EXIT_HUNG_UP
from moot.tui.hangup import MootDriver, TerminalOutput

_ENDS_WITHIN = 20.0
"""How long a process may take to end once its terminal is gone (it takes well under 1 s)."""


class _Terminal:
    """`moot` on a pseudo-terminal of 120x40 whose far end is this object's."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str], *, controlling: bool):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, bytes([40, 0, 120, 0, 0, 0, 0, 0]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moot.cli", *args],
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            # The terminal as its controlling one (its hang-up sends SIGHUP and SIGCONT), or
            # not (a `setsid` start: closing it sends no signal at all).
            preexec_fn=_take_terminal if controlling else os.setsid,
        )
        os.close(slave)
        self.shown = b""

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0 and self.process.poll() is None, self.shown[-400:]
            self.read(left)

    def read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            self.shown += os.read(self.master, 65536)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def go_away(self) -> None:
        os.close(self.master)
        self.master = -1

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.master >= 0:
            os.close(self.master)


def _take_terminal() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "script.json"
    # An answer of ~1.5 s, streamed: the terminal goes away while it is being drawn.
    turn = {"text": "streamed " * 3000, "rate": 2000, "chunk_size": 4}
    script.write_text(json.dumps({"turns": [turn]}))
    env = terminal_env(tmp_path / "home")
    env.pop("PROMPT_TOOLKIT_NO_CPR", None)
    env["MOOT_HOME"] = str(tmp_path / "moot-home")
    return repo, script, env


def _backed_up(pid: int, timeout: float = 10.0) -> None:
    """Wait until a thread of `pid` waits to write to the terminal (whose buffer is full, as
    the test reads nothing), or `timeout` passes: the stimulus, not a condition of the test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waits = set()
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                waits.add(Path(f"/proc/{pid}/task/{task}/wchan").read_text())
        if waits & {"wait_woken", "n_tty_write"}:
            return
        time.sleep(0.05)  # polling another process's state


def _ended(terminal: _Terminal) -> bool:
    try:
        terminal.process.wait(_ENDS_WITHIN)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("front_end", [[], ["--plain"]], ids=["app", "repl"])
def test_a_terminal_that_goes_away_unsignalled_ends_moot(
    workspace: tuple[Path, Path, dict[str, str]], front_end: list[str]
) -> None:
    """Not its controlling terminal (started by `setsid`, say): closing it sends no SIGHUP.
    The app's input read an end of file over and over, a core busy for good."""
    repo, script, env = workspace
    terminal = _Terminal(
        [*front_end, "--model", f"scripted:{script}"], repo, env, controlling=False
    )
    try:
        terminal.wait_for("ses_")
        terminal.go_away()
        assert _ended(terminal), "moot lived on after its terminal went away"
        # The hang-up's status, as a shell reports it, not a failed last flush (120 before).
        assert terminal.process.returncode == EXIT_HUNG_UP
    finally:
        terminal.close()


@pytest.mark.parametrize("front_end", [[], ["--plain"]], ids=["app", "repl"])
def test_a_terminal_that_hangs_up_while_an_answer_streams_ends_moot(
    workspace: tuple[Path, Path, dict[str, str]], front_end: list[str]
) -> None:
    """Its controlling terminal hangs up (a closed window): SIGHUP, and the SIGCONT that comes
    with it. The app's SIGCONT started a second output thread over the dead terminal, whose
    first failed write ended it; the exit then waited on its full queue for good (one run in
    three or two before the fix; the unit tests below fail every time)."""
    repo, script, env = workspace
    # Unbuffered (as containers often set it), each frame is written at once: buffered, a
    # failed write could surface at a flush the thread survived.
    env["PYTHONUNBUFFERED"] = "1"
    terminal = _Terminal([*front_end, "--model", f"scripted:{script}"], repo, env, controlling=True)
    try:
        terminal.wait_for("ses_")
        terminal.type("go\r")
        terminal.wait_for("streamed streamed")
        os.kill(terminal.process.pid, signal.SIGCONT)
        _backed_up(terminal.process.pid)  # the terminal reads nothing more: frames queue up
        terminal.go_away()
        assert _ended(terminal), "moot lived on after its terminal hung up"
        # Not a traceback from a last word into the dead terminal (1 before, app and REPL).
        assert terminal.process.returncode == EXIT_HUNG_UP
    finally:
        terminal.close()


def test_output_to_a_terminal_that_failed_is_dropped(tmp_path: Path) -> None:
    """After the first write that fails, nothing more is tried and nothing raises (Textual's
    output thread would have ended, and the app's writes filled its queue)."""

    class Gone:
        def __init__(self) -> None:
            self.written: list[str] = []

        def write(self, text: str) -> None:
            self.written.append(text)
            raise OSError(5, "Input/output error")

        def flush(self) -> None:
            raise AssertionError("flushed after the terminal failed")

    gone = Gone()
    output = TerminalOutput(gone)
    output.write("frame 1")
    output.write("frame 2")
    output.flush()
    assert output.failed and gone.written == ["frame 1"]


def test_a_sigcont_resumes_only_what_ctrl_z_suspended(monkeypatch: pytest.MonkeyPatch) -> None:
    resumed: list[bool] = []
    driver = MootDriver.__new__(MootDriver)
    driver._auto_restart = True
    monkeypatch.setattr(driver, "resume_application_mode", lambda: resumed.append(True))
    driver._must_signal_resume = False
    driver._sigcont_application(signal.SIGCONT, None)  # out of the blue: a hang-up sends one
    assert resumed == []
    driver._must_signal_resume = True  # as `_sigtstp_application` leaves it
    driver._sigcont_application(signal.SIGCONT, None)
    assert resumed == [True]
