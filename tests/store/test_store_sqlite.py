"""What only the SQLite store does: the file, reopening it, and sharing it between writers."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from moot.protocol.events import Event, StateChanged
from moot.store import EventInvariantError, SQLiteStore, StoreError, open_store
from moot.store.invariants import SessionLog
from moot.store.sqlite_schema import SCHEMA_VERSION
from moot.store.wal import BACKSTOP_PAGES, EVERY_COMMITS
from store_builders import RunScript, S, append_all, full_run, short_run

TESTS_DIR = Path(__file__).parents[1]
SCHEMA_2 = TESTS_DIR / "fixtures" / "schema2.db"
"""A database moot wrote at schema version 2 (`fixtures/make_schema2_db.py` says what it holds)."""


def test_creates_the_file_and_its_schema(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "sessions.db"
    SQLiteStore(path).close()

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables >= {"sessions", "events", "runs", "checkpoints"}
    db.close()
    SQLiteStore(path).close()  # opening again leaves the schema as it is


def test_the_log_is_copied_into_the_file_beside_the_appends_and_the_copier_stops_at_close(
    tmp_path: Path,
) -> None:
    """SQLite's own checkpoint (an fsync pair) would run in `append` every ~280 events and stall
    the loop; the WAL thread runs it instead, every `EVERY_COMMITS` appends. Until a
    checkpoint, pages live in the log only and the database file does not grow: it grows here
    with the appending connection's own checkpoint far off (`BACKSTOP_PAGES`)."""

    def copiers() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name == "moot-wal-checkpoint"}

    others = copiers()  # stores other tests left open keep theirs
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    sid = store.create_session(title="long").id
    before = path.stat().st_size
    runs = -(-EVERY_COMMITS // 5)  # a short run is five events

    for _ in range(runs):
        append_all(store, short_run(sid))

    assert runs * 5 * 4 < BACKSTOP_PAGES  # far fewer pages than the backstop: not its doing
    deadline = time.monotonic() + 10
    while path.stat().st_size == before and time.monotonic() < deadline:
        time.sleep(0.01)  # bounded polling of the copier's thread
    assert path.stat().st_size > before
    assert copiers() - others  # this store's copier ran
    store.close()
    assert not copiers() - others


def test_a_database_from_a_newer_moot_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()

    with pytest.raises(StoreError, match=r"newer moot.*update moot"):
        SQLiteStore(path)


def recount(path: Path) -> dict[str, tuple[int, float, int]]:
    """Each session's turn totals counted from its runs and their last events, as a session
    list did before they were kept."""
    db = sqlite3.connect(path)
    rows = db.execute(
        """SELECT s.id, COUNT(r.run_id),
               COALESCE(SUM(json_extract(e.body, '$.cost_usd')), 0),
               COALESCE(SUM(COALESCE(json_extract(e.body, '$.usage.input_tokens'), 0)
                            + COALESCE(json_extract(e.body, '$.usage.output_tokens'), 0)), 0)
           FROM sessions AS s LEFT JOIN runs AS r ON r.session_id = s.id
           LEFT JOIN events AS e ON e.session_id = r.session_id AND e.seq = r.finished_seq
           GROUP BY s.id"""
    ).fetchall()
    db.close()
    return {sid: (turns, cost, tokens) for sid, turns, cost, tokens in rows}


def test_a_database_an_older_moot_wrote_migrates_and_lists_its_totals(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    shutil.copy(SCHEMA_2, path)
    ids = ["ses_talk", "ses_runs", "ses_empty"]
    store = SQLiteStore(path)
    # Two turns with usage and cost; two finished runs of (10 + 5) tokens and $0.01 and an open
    # one; nothing.
    expected = {"ses_talk": (2, 0.875, 369), "ses_runs": (3, 0.02, 30), "ses_empty": (0, 0.0, 0)}
    assert store.turn_totals(ids) == pytest.approx(expected)
    assert recount(path) == pytest.approx(expected)
    # The totals go on as runs are appended; the file is at the new version.
    append_all(store, [*short_run("ses_empty"), *short_run("ses_talk")[:1]])
    append_all(store, full_run("ses_empty"))
    assert store.turn_totals(ids) == pytest.approx(recount(path))
    assert store.turn_totals(["ses_empty"])["ses_empty"][0] == 2
    store.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    db.close()
    # Opened again, nothing is migrated twice.
    with SQLiteStore(path) as again:
        assert again.turn_totals(ids) == pytest.approx(recount(path))


def test_turn_totals_cost_the_same_however_many_runs_a_session_holds(tmp_path: Path) -> None:
    """A session list reads each session's totals, not each of its runs: SQLite runs as many
    instructions for a session of 200 runs as for one of 2."""
    store = SQLiteStore(tmp_path / "sessions.db")
    few, many = store.create_session().id, store.create_session().id
    for sid, runs in ((few, 2), (many, 200)):
        for _ in range(runs):
            append_all(store, short_run(sid))

    def instructions(session_id: str) -> int:
        steps = 0

        def count() -> int:
            nonlocal steps
            steps += 1
            return 0  # go on

        store._db.set_progress_handler(count, 1)  # every SQLite VM instruction
        try:
            assert store.turn_totals([session_id])[session_id][0] in (2, 200)
        finally:
            store._db.set_progress_handler(None, 1)
        return steps

    assert instructions(many) == instructions(few)
    store.close()


def test_deleting_a_session_deletes_its_checkpoints_lists(tmp_path: Path) -> None:
    from moot.store.base import ListTail

    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    gone, kept = store.create_session().id, store.create_session().id
    for sid in (gone, kept):
        store.save_checkpoint(sid, "session", 1, {}, {"main": ListTail(0, [b"1", b"2"])})
    store.delete_session(gone)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT session_id, COUNT(*) FROM checkpoint_items GROUP BY 1").fetchall()
    db.close()
    assert rows == [(kept, 2)]
    store.close()


def test_reopened_session_continues_with_its_seq_and_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.db"
    with SQLiteStore(path) as first:
        sid = first.create_session(title="yesterday").id
        s = RunScript(sid)
        finished = append_all(first, [*full_run(sid), *short_run(sid)])
        opened = append_all(first, [s.start(), *s.model_turn(), *s.tools_to_running()])
        opened.append(first.append(s.tool_started("tc_1")))
    replayed: list[list[Event]] = []
    real_replay = SessionLog.replay

    def spy(session_id: str, events: list[Event], **kw: Any) -> SessionLog:
        replayed.append(list(events))
        return real_replay(session_id, replayed[-1], **kw)

    monkeypatch.setattr(SessionLog, "replay", spy)

    with SQLiteStore(path) as second:
        assert second.open_run(sid) == s.run_id
        with pytest.raises(EventInvariantError, match="rule c"):
            second.append(s.event(StateChanged, from_state=S.CREATED, to_state=S.MODEL_PENDING))
        with pytest.raises(EventInvariantError, match="rule b"):
            second.append(RunScript(sid).start())
        with pytest.raises(EventInvariantError, match="after its turn_finished"):
            second.append(finished[3])
        with pytest.raises(EventInvariantError, match="started twice"):
            second.append(s.tool_started("tc_1"))

        rest = append_all(second, [s.tool_finished("tc_1"), s.move(S.OBSERVATION_RECORDED)])
        rest.append(second.append(s.finish()))

        seqs = [e.seq for e in second.events(sid)]
        assert seqs == list(range(1, len(finished) + len(opened) + len(rest) + 1))
        assert rest[0].seq == opened[-1].seq + 1
        assert second.open_run(sid) is None
        info = second.session(sid)
        assert info is not None
        assert (info.event_count, info.last_run_state) == (seqs[-1], "completed")
    # The log was loaded once, from the open run's events alone.
    assert replayed == [opened]


def test_two_stores_appending_to_one_session_keep_the_rules(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    a, b = SQLiteStore(path), SQLiteStore(path)
    sid = a.create_session().id
    s = RunScript(sid)

    assert a.append(s.start()).seq == 1
    assert b.append(s.move(S.MODEL_PENDING)).seq == 2
    assert a.append(s.text()).seq == 3  # a's view was stale: it reloads and goes on
    assert a.append(s.move(S.DECISION_RECEIVED)).seq == 4
    stale = s.event(StateChanged, from_state=S.MODEL_PENDING, to_state=S.DECISION_RECEIVED)
    with pytest.raises(EventInvariantError, match=r"but call .* is in decision_received"):
        b.append(stale)
    assert b.append(s.finish()).seq == 5

    assert [e.seq for e in a.events(sid)] == [1, 2, 3, 4, 5]
    a.close()
    b.close()


_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from moot.store.sqlite import SQLiteStore
    from store_builders import short_run

    store = SQLiteStore(sys.argv[2])
    session_id, runs, texts = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    print("ready", flush=True)
    sys.stdin.readline()  # start together with the other writer
    for _ in range(runs):
        for event in short_run(session_id, texts=texts):
            store.append(event)
    store.close()
    """
)


def test_two_processes_write_two_sessions_of_one_database(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    runs, texts = 20, 96  # 20 runs of 100 events: 2,000 events per writer
    with SQLiteStore(path) as store:
        sids = [store.create_session(title=f"writer {i}").id for i in range(2)]

    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(TESTS_DIR), str(path), sid, str(runs), str(texts)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sid in sids
    ]
    for writer in writers:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()
    with SQLiteStore(path) as store:
        for sid in sids:
            events = store.events(sid)
            assert [e.seq for e in events] == list(range(1, 2001))
            assert sum(e.kind == "turn_finished" for e in events) == runs
            info = store.session(sid)
            assert info is not None
            assert (info.event_count, info.last_run_state) == (2000, "completed")
            assert store.open_run(sid) is None


def test_open_store_uses_the_data_dir_of_moot_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    with open_store() as store:
        assert store.path == tmp_path / "home" / "data" / "sessions.db"
        store.create_session()
    assert (tmp_path / "home" / "data" / "sessions.db").exists()
    with open_store(tmp_path / "elsewhere.db") as store:
        assert store.sessions() == []
