"""A sessions database moot cannot use fails with a `StoreError` that says what to do, and
moot writes nothing over a file it cannot read."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from moot.core.agent import Agent
from moot.core.api import async_run
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.events import Event
from moot.providers.scripted import ScriptedProvider
from moot.store import MemoryStore, SQLiteStore, StoreError
from moot.store import sqlite as sqlite_store
from store_builders import RunScript, append_all, full_run


def _digest(directory: Path) -> dict[str, str]:
    """Every file in `directory`, by name, with its content's hash."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


def _a_store_with_history(path: Path) -> str:
    with SQLiteStore(path) as store:
        sid = store.create_session(title="kept").id
        for _ in range(30):
            append_all(store, full_run(sid))
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
    db.close()
    return sid


def _garbage(path: Path) -> None:
    path.write_bytes(os.urandom(20_000))


def _truncated_in_the_header(path: Path) -> None:
    _a_store_with_history(path)
    os.truncate(path, 3000)


def _truncated_in_the_middle(path: Path) -> None:
    _a_store_with_history(path)
    os.truncate(path, path.stat().st_size // 2)


def _another_programs_database(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.execute("INSERT INTO notes VALUES ('mine')")
    db.commit()
    db.close()


def _read_everything(path: Path) -> None:
    with SQLiteStore(path) as store:
        for info in store.sessions():
            store.events(info.id)


@pytest.mark.parametrize(
    "spoil",
    [_garbage, _truncated_in_the_header, _truncated_in_the_middle, _another_programs_database],
)
def test_a_file_that_is_not_a_whole_moot_database_is_refused_and_left_as_it_is(
    tmp_path: Path, spoil: Callable[[Path], None]
) -> None:
    path = tmp_path / "sessions.db"
    spoil(path)
    before = _digest(tmp_path)

    with pytest.raises(StoreError) as caught:
        _read_everything(path)  # a damaged page may only show when it is read

    message = str(caught.value)
    assert str(path) in message
    assert "not a moot sessions database, or is damaged" in message
    assert f"mv {path} {path}.broken" in message
    assert "\n" not in message
    assert _digest(tmp_path) == before  # nothing written over it, nothing beside it


def test_an_event_that_does_not_read_back_is_named(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SQLiteStore(path) as store:
        sid = store.create_session().id
        s = RunScript(sid)
        append_all(store, [s.start(), *s.model_turn()])  # an open run: its events are replayed
    db = sqlite3.connect(path)
    db.execute('UPDATE events SET body = \'{"kind": "nonsense\' WHERE seq = 2')
    db.commit()
    db.close()

    with SQLiteStore(path) as store:
        with pytest.raises(StoreError, match=f"an event of session {sid}"):
            store.events(sid)
        with pytest.raises(StoreError, match=f"an event of session {sid}"):
            store.append(s.tool_started("tc_1"))


def test_a_write_lock_held_past_the_busy_timeout_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "sessions.db"
    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_S", 0.2)
    store = SQLiteStore(path)
    sid = store.create_session().id
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
    try:
        with pytest.raises(StoreError, match=r"stayed locked by another process for 0.2 s"):
            store.append(RunScript(sid).start())
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.append(RunScript(sid).start())  # and goes on once the lock is let go
    store.close()


def test_a_directory_where_the_database_should_be(tmp_path: Path) -> None:
    (tmp_path / "sessions.db").mkdir()
    with pytest.raises(StoreError, match=r"cannot open .*sessions\.db"):
        SQLiteStore(tmp_path / "sessions.db")


def test_a_file_where_the_data_directory_should_be(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("not a directory")
    with pytest.raises(StoreError, match=f"cannot create {tmp_path / 'data'}"):
        SQLiteStore(tmp_path / "data" / "sessions.db")


# ---- a store that fails under a live run ------------------------------------------------------


class _FillsUp(MemoryStore):
    """A real in-memory store whose disk "fills" after `room` events: every later append
    fails as SQLite's would."""

    def __init__(self, room: int) -> None:
        super().__init__()
        self.room = room

    def append(self, event: Event) -> Event:
        if self.room <= 0:
            raise StoreError("cannot write sessions.db: the disk is full", Path("sessions.db"))
        self.room -= 1
        return super().append(event)


async def test_a_run_whose_store_fails_ends_its_streams_and_wait_raises() -> None:
    """Before, no turn_finished could be stored, and a subscriber waited for one forever."""
    store = _FillsUp(room=3)
    model = ScriptedProvider([{"text": "a long answer", "chunk_size": 1}])
    runtime = Runtime([Agent("main", model=model)], store=store)
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="hi"))

    seen = [event async for event in events]  # ends, though no turn_finished came

    assert len(seen) == 3
    assert not any(isinstance(e, ev.TurnFinished) for e in seen)
    with pytest.raises(StoreError, match="the disk is full"):
        await runtime.wait()


async def test_the_api_frees_the_session_when_its_store_fails() -> None:
    store = _FillsUp(room=3)
    sid = store.create_session().id
    model = ScriptedProvider([{"text": "a long answer", "chunk_size": 1}])
    with pytest.raises(StoreError):
        await async_run("hi", Agent("main", model=model), store=store, session_id=sid)
    store.claim(sid).release()  # not held by the failed run's runtime
