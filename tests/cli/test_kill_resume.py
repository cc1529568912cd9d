"""Resume after a real `kill -9` of `moot -p` (scripted model, real store, real shell): the
session goes on with no event lost or duplicated and no side effect repeated. Mid-stream and
mid-tool through the command line; while waiting for an approval through a session that can
ask (headless never waits), in a worker process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from moot.protocol import events as ev
from moot.store.sqlite import SQLiteStore
from moot_cli import moot_command, moot_env

TIMEOUT = 30


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"}
    return subprocess.Popen(
        moot_command(*args), cwd=tmp_path / "work", env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def kill_when(
    proc: subprocess.Popen[str],
    seen: Callable[[ev.Event], bool],
    then: Callable[[], bool] = lambda: True,
) -> list[ev.Event]:
    """Read the stream until an event `seen` accepts and `then()` holds, then SIGKILL; the
    events printed."""
    printed: list[ev.Event] = []
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            printed.append(ev.event_from_json(line))
            if seen(printed[-1]):
                break
        else:
            raise AssertionError(
                f"the run ended first: {proc.stderr.read() if proc.stderr else ''}"
            )
        deadline = time.monotonic() + TIMEOUT
        while not then():  # a side effect of the process, outside its stream
            assert time.monotonic() < deadline, "the process never got there"
            os.sched_yield()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    assert proc.returncode == -signal.SIGKILL
    return printed


def finish(tmp_path: Path, session_id: str, model: str) -> subprocess.CompletedProcess[str]:
    env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"}
    return subprocess.run(
        moot_command("--resume", session_id, "--model", model, "--output-format", "events",
                     "--permission-mode", "bypassPermissions"),
        cwd=tmp_path / "work", env=env, text=True, capture_output=True, timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def stored(tmp_path: Path, session_id: str) -> list[ev.Event]:
    db = next((tmp_path / "home").rglob("sessions.db"))
    return SQLiteStore(db).events(session_id)


def assert_one_clean_log(printed: list[ev.Event], log: list[ev.Event]) -> None:
    """Seqs 1..N with no gap or repeat; what the killed process printed is the log's start,
    unchanged; one run, resumed once, finished once."""
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    plain = msgspec.to_builtins
    assert [plain(e) for e in log[: len(printed)]] == [plain(e) for e in printed]
    kinds = [e.kind for e in log]
    assert kinds.count("turn_started") == 1
    assert kinds.count("run_resumed") == 1
    assert kinds.count("turn_finished") == 1 and kinds[-1] == "turn_finished"


def script(tmp_path: Path, turns: list[object]) -> str:
    (tmp_path / "work").mkdir(exist_ok=True)
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def test_killed_mid_stream_the_answer_is_asked_again_and_nothing_is_lost(tmp_path: Path) -> None:
    # Slow enough (50 characters a second) that the kill lands inside the stream.
    model = script(tmp_path, [{"text": "x" * 100, "chunk_size": 4, "rate": 12.5}])
    proc = start(tmp_path, "-p", "say it", "--model", model, "--output-format", "events")
    printed = kill_when(proc, lambda e: isinstance(e, ev.TextDelta))
    session_id = printed[0].session_id

    resumed = finish(tmp_path, session_id, model)

    assert resumed.returncode == 0, resumed.stderr
    log = stored(tmp_path, session_id)
    assert_one_clean_log(printed, log)
    (answer,) = [e for e in log if isinstance(e, ev.ModelResponded)]
    assert answer.text == "x" * 100 and not answer.partial
    assert log[-1].output == "x" * 100


def test_killed_mid_tool_the_command_is_not_run_again(tmp_path: Path) -> None:
    command = "echo ran >> ran.txt && exec sleep 20"
    model = script(tmp_path, [{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                              "done"])  # fmt: skip
    proc = start(tmp_path, "-p", "run it", "--model", model, "--output-format", "events",
                 "--permission-mode", "bypassPermissions")  # fmt: skip
    ran = tmp_path / "work" / "ran.txt"
    printed = kill_when(proc, lambda e: isinstance(e, ev.ToolStarted), ran.exists)
    session_id = printed[0].session_id

    resumed = finish(tmp_path, session_id, model)

    assert resumed.returncode == 0, resumed.stderr
    assert ran.read_text() == "ran\n"  # once: never re-run
    log = stored(tmp_path, session_id)
    assert_one_clean_log(printed, log)
    (result,) = [e for e in log if isinstance(e, ev.ToolFinished)]
    assert result.interrupted
    assert log[-1].output == "done"


def kill_waiting_worker(tmp_path: Path, model: str, db: Path) -> list[ev.Event]:
    """Run `approval_worker.py` until it waits for an approval, then SIGKILL it."""
    worker = Path(__file__).parents[1] / "approval_worker.py"
    env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none",
           "PYTHONPATH": os.pathsep.join(sys.path)}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, str(worker), str(tmp_path / "work"), model, str(db)],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    return kill_when(proc, lambda e: isinstance(e, ev.ApprovalRequested))


async def test_killed_while_waiting_for_an_approval_it_is_asked_again_and_runs_once(
    tmp_path: Path,
) -> None:
    from moot.client.local import SessionOptions, open_client
    from moot.testing import drive_turn
    from moot.testing.drive import approve

    write = {"name": "write", "arguments": {"path": "out.txt", "content": "once\n"}}
    model = script(tmp_path, [{"tool_calls": [write]}, "written"])
    db = tmp_path / "s.db"
    printed = kill_waiting_worker(tmp_path, model, db)
    session_id = printed[0].session_id
    assert not (tmp_path / "work" / "out.txt").exists()

    options = SessionOptions(cwd=tmp_path / "work", model=model, session_id=session_id)
    client = open_client(options, store=SQLiteStore(db))
    outcome = await drive_turn(client, resume=True, answer=approve)
    await client.close()

    assert outcome.finished.output == "written"
    assert (tmp_path / "work" / "out.txt").read_text() == "once\n"
    log = SQLiteStore(db).events(session_id)
    assert_one_clean_log(printed, log)
    assert [e.kind for e in log].count("tool_started") == 1  # it ran once, after the answer
