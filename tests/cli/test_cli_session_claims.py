"""A live session belongs to its `moot`: real processes, a private MOOT_HOME per test.

A second `moot --resume` of a live run once appended into it and then waited forever, deaf to
Ctrl-C. Now it is refused at once, naming the process that holds the session; the session is
free again as soon as that process is gone (`kill -9` included); and Ctrl-C always ends moot.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from moot.protocol import events as ev
from moot.protocol.states import RunState, StopReason

TIMEOUT = 30  # seconds; a bound for a hung process, never a wait
TESTS_DIR = Path(__file__).parents[1]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    env.pop("MOOT_MODEL", None)
    return env


def _script(tmp_path: Path, name: str, turns: list[object]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


def _moot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
        timeout=TIMEOUT,
    )


class _Lines:
    """A pipe read on a thread, so that the test can wait for a line with a bound."""

    def __init__(self, pipe: IO[str] | None) -> None:
        assert pipe is not None
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self._lines.put(x) for x in pipe], daemon=True).start()

    def next(self) -> str:
        return self._lines.get(timeout=TIMEOUT)


@contextmanager
def _live(tmp_path: Path, *command: str) -> Iterator[tuple[subprocess.Popen[str], _Lines]]:
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    try:
        yield process, _Lines(process.stdout)
    finally:
        process.kill()
        process.wait(TIMEOUT)
        process.stdout.close()  # type: ignore[union-attr]
        process.stderr.close()  # type: ignore[union-attr]


def test_a_live_session_refuses_a_second_moot_at_once_and_kill_9_frees_it(
    tmp_path: Path,
) -> None:
    slow = _script(tmp_path, "slow.json", [{"text": "slow answer", "delay": 60}])
    quick = _script(tmp_path, "quick.json", ["done"])
    moot = (sys.executable, "-m", "moot.cli")
    with _live(tmp_path, *moot, "-p", "go", "--model", slow, "--output-format", "events") as (
        first,
        lines,
    ):
        sid = ev.event_from_json(lines.next()).session_id

        started = time.monotonic()
        resumed = _moot(tmp_path, "--resume", sid, "--model", quick)
        elapsed = time.monotonic() - started
        another_turn = _moot(tmp_path, "-p", "more", "--resume", sid, "--model", quick)
        listed = _moot(tmp_path, "sessions", "list")
        new_session = _moot(tmp_path, "-p", "meanwhile", "--model", quick)
        log = json.loads(_moot(tmp_path, "sessions", "export", sid, "--format", "json").stdout)

        for refused in (resumed, another_turn):
            assert refused.returncode == 1, refused.stderr
            assert refused.stderr == (
                f"moot: session {sid} is in use by another moot process (pid {first.pid}); "
                "wait for it to end, or stop it, then try again\n"
            )
        assert elapsed < 10  # refused at once: only the interpreter's start-up
        assert listed.returncode == 0, listed.stderr
        assert f"{sid}  " in listed.stdout and "running" in listed.stdout
        assert new_session.returncode == 0, new_session.stderr
        assert new_session.stdout == "done\n"
        assert [e["kind"] for e in log["events"]] == ["turn_started", "state_changed"]

        first.send_signal(signal.SIGKILL)
        first.wait(TIMEOUT)

    finished = _moot(tmp_path, "--resume", sid, "--model", quick, "--output-format", "events")

    assert finished.returncode == 0, finished.stderr
    events = [ev.event_from_json(line) for line in finished.stdout.splitlines()]
    assert isinstance(events[0], ev.RunResumed)
    assert events[0].seq == 4  # after the killed run's two events and this sitting's start
    assert isinstance(events[-1], ev.TurnFinished)
    assert events[-1].output == "done"
    assert list((tmp_path / "home" / "data" / "sessions.db-locks").iterdir()) == []


def test_two_new_sessions_run_at_once_in_one_store(tmp_path: Path) -> None:
    slow = _script(tmp_path, "slow.json", [{"text": "first", "delay": 60}])
    quick = _script(tmp_path, "quick.json", ["second"])
    moot = (sys.executable, "-m", "moot.cli")
    with _live(tmp_path, *moot, "-p", "go", "--model", slow, "--output-format", "events") as (
        _,
        lines,
    ):
        lines.next()  # the first run is live
        second = _moot(tmp_path, "-p", "go", "--model", quick)
    assert (second.returncode, second.stdout) == (0, "second\n"), second.stderr


def test_a_second_ctrl_c_ends_moot_whatever_the_run_still_waits_for(tmp_path: Path) -> None:
    """The first SIGINT cancels the run; the interpreter then waits for a tool's stuck thread,
    and the second SIGINT ends the process at once."""
    command = (sys.executable, str(TESTS_DIR / "signal_worker.py"))
    with _live(tmp_path, *command) as (process, lines):
        while ev.event_from_json(lines.next()).kind != "tool_started":
            pass
        process.send_signal(signal.SIGINT)
        while not isinstance(last := ev.event_from_json(lines.next()), ev.TurnFinished):
            pass
        assert (last.state, last.stop_reason) == (RunState.CANCELLED, StopReason.USER_CANCELLED)
        assert process.poll() is None  # waiting for the stuck thread

        process.send_signal(signal.SIGINT)
        code = process.wait(TIMEOUT)
        stderr = process.stderr.read()  # type: ignore[union-attr]

    assert code == 130
    assert stderr.startswith("moot: stopped at once; `moot --resume ses_")
