"""5. Resuming a crashed run whose log holds 10,000 events, in a fresh process.

The log is made the honest way: a child process runs the echo agent and is killed with SIGKILL
once its session holds enough events, so the run is left open exactly as a crash leaves it
(nothing records a terminal event). A copy of the database files, taken right after the kill
and before any other connection closes (the last one to close would checkpoint the WAL away),
is resumed afresh by each measured process, so no resume sees another one's appends.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from moot.store.sqlite import SQLiteStore
from report import Row, ms
from timing import median

NAME = "resume"
WORKER = Path(__file__).with_name("resume_worker.py")
TARGET = "<= 300 ms"
BUILD_TIMEOUT_S = 120.0


def copy_database(source: Path, target: Path) -> None:
    """Copy a SQLite database with its WAL and shared-memory files, where they exist."""
    for suffix in ("", "-wal", "-shm"):
        path = source.with_name(source.name + suffix)
        if path.exists():
            shutil.copyfile(path, target.with_name(target.name + suffix))


def crash_after(db: Path, min_events: int, snapshot: Path) -> tuple[str, int]:
    """Run the echo agent until its log holds `min_events`, SIGKILL it, copy the database.

    Returns:
        The session id and how many events the log holds.
    """
    child = subprocess.Popen(
        [sys.executable, str(WORKER), "build", str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        session_id = child.stdout.readline().strip()
        if not session_id:
            raise RuntimeError("the resume worker exited before it created its session")
        store = SQLiteStore(db)
        try:
            deadline = time.monotonic() + BUILD_TIMEOUT_S
            while _event_count(store, session_id) < min_events:
                if child.poll() is not None:
                    raise RuntimeError(f"the resume worker exited with {child.returncode}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the log did not reach {min_events} events in time")
                time.sleep(0.01)
            child.send_signal(signal.SIGKILL)
            child.wait()
            if store.open_run(session_id) is None:
                raise RuntimeError("the killed run is not open in the log")
            count = _event_count(store, session_id)
            copy_database(db, snapshot)
        finally:
            store.close()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return session_id, count


def _event_count(store: SQLiteStore, session_id: str) -> int:
    info = store.session(session_id)
    return info.event_count if info else 0


def measure_resume(snapshot: Path, session_id: str, workdir: Path) -> dict[str, float]:
    """Resume a fresh copy of the crashed log in a new process; its timings in seconds."""
    db = workdir / "resume.db"
    copy_database(snapshot, db)
    done = subprocess.run(
        [sys.executable, str(WORKER), "measure", str(db), session_id],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the resume worker failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def run(*, quick: bool) -> list[Row]:
    min_events, runs = (2_000, 2) if quick else (10_000, 5)
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        root = Path(tmp)
        snapshot = root / "crashed.db"
        session_id, count = crash_after(root / "live.db", min_events, snapshot)
        timings = []
        for i in range(runs):
            workdir = root / f"run{i}"
            workdir.mkdir()
            timings.append(measure_resume(snapshot, session_id, workdir))

    def typical(key: str) -> str:
        return ms(median([t[key] for t in timings]))

    how = f"median of {runs} fresh processes"
    return [
        Row(
            f"resume {count:,}-event log: open store + load, Runtime ready ({how})",
            typical("ready"),
            TARGET,
        ),
        Row(
            "  same, until the resumed run's first model request", typical("first_request"), TARGET
        ),
        Row("  moot imports in that process, before the resume starts", typical("imports"), ""),
    ]
