"""The sessions database's file: made this user's only before SQLite opens it, its schema and
the migrations up to it, and what it refuses (another program's database, a newer moot's).
`SQLiteStore` runs these once, as it opens the file."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from moot.store.errors import StoreError, damaged

SCHEMA_VERSION = 4
"""Kept in `PRAGMA user_version`; `_MIGRATIONS` takes an older database up to it."""

# `sessions.updated_at` and `sessions.event_count` are refreshed at run boundaries only, to keep
# appends to one INSERT; readers take the live values from the session's last event.
_SCHEMA_1 = (
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        title TEXT NOT NULL,
        workspace TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        event_count INTEGER NOT NULL DEFAULT 0,
        last_state TEXT
    )""",
    """CREATE TABLE events (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        ts TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID""",
    "CREATE INDEX events_by_run ON events (session_id, run_id, seq)",
    # One row per run, written by its turn_started and turn_finished: finding the open run and
    # the finished ones never scans the log.
    """CREATE TABLE runs (
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        started_seq INTEGER NOT NULL,
        finished_seq INTEGER,
        state TEXT,
        PRIMARY KEY (session_id, run_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE checkpoints (
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, run_id, seq)
    ) WITHOUT ROWID""",
)
# Version 2: file snapshots. Blobs keep their rowid: SQLite advises against WITHOUT ROWID for
# rows larger than a small fraction of a page, and file contents are.
_SCHEMA_2 = (
    "CREATE TABLE blobs (digest TEXT PRIMARY KEY, data BLOB NOT NULL)",
    """CREATE TABLE snapshots (
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        path TEXT NOT NULL,
        digest TEXT,
        PRIMARY KEY (session_id, run_id, path)
    ) WITHOUT ROWID""",
)
# Version 3: what a long session must not make slower.
# - Each session's turn totals (`turn_totals`: runs begun, what the finished ones cost, the
#   tokens they read and wrote), kept by triggers on `runs` as its row is written at a run's
#   first and last event, so a session list reads three columns rather than every run's last
#   event; the database's own triggers, so a moot that opened the file before it was migrated
#   keeps them too. The columns are filled from the runs already there.
# - The lists a checkpoint keeps item by item (a session's conversations: `ListTail`), so a
#   checkpoint writes what a run added, not the whole history again.
_FINISHED_COST = "json_extract(e.body, '$.cost_usd')"
_FINISHED_TOKENS = (
    "COALESCE(json_extract(e.body, '$.usage.input_tokens'), 0)"
    " + COALESCE(json_extract(e.body, '$.usage.output_tokens'), 0)"
)
_SCHEMA_3 = (
    "ALTER TABLE sessions ADD COLUMN turns INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0",
    "ALTER TABLE sessions ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0",
    f"""UPDATE sessions SET
        turns = (SELECT COUNT(*) FROM runs AS r WHERE r.session_id = sessions.id),
        cost_usd = (
            SELECT COALESCE(SUM({_FINISHED_COST}), 0) FROM runs AS r
            JOIN events AS e ON e.session_id = r.session_id AND e.seq = r.finished_seq
            WHERE r.session_id = sessions.id),
        tokens = (
            SELECT COALESCE(SUM({_FINISHED_TOKENS}), 0) FROM runs AS r
            JOIN events AS e ON e.session_id = r.session_id AND e.seq = r.finished_seq
            WHERE r.session_id = sessions.id)""",
    """CREATE TRIGGER run_begun AFTER INSERT ON runs BEGIN
        UPDATE sessions SET turns = turns + 1 WHERE id = NEW.session_id;
    END""",
    # A run's last event is stored before its row is marked finished (`insert_event`).
    f"""CREATE TRIGGER run_finished AFTER UPDATE OF finished_seq ON runs
    WHEN OLD.finished_seq IS NULL AND NEW.finished_seq IS NOT NULL BEGIN
        UPDATE sessions SET
            cost_usd = cost_usd + COALESCE((
                SELECT {_FINISHED_COST} FROM events AS e
                WHERE e.session_id = NEW.session_id AND e.seq = NEW.finished_seq), 0),
            tokens = tokens + COALESCE((
                SELECT {_FINISHED_TOKENS} FROM events AS e
                WHERE e.session_id = NEW.session_id AND e.seq = NEW.finished_seq), 0)
        WHERE id = NEW.session_id;
    END""",
    # Items can be large (a tool's output): a rowid table, as for blobs.
    """CREATE TABLE checkpoint_items (
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        list TEXT NOT NULL,
        pos INTEGER NOT NULL,
        item BLOB NOT NULL,
        PRIMARY KEY (session_id, run_id, list, pos)
    )""",
)
# Version 4: attachments (images, PDFs) stored once in `blobs`; which session names which, so
# deleting one session keeps the blobs another still shows (`attachment_blobs`).
_SCHEMA_4 = (
    """CREATE TABLE attachment_refs (
        session_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        PRIMARY KEY (session_id, digest)
    ) WITHOUT ROWID""",
)
_MIGRATIONS = {1: _SCHEMA_1, 2: _SCHEMA_2, 3: _SCHEMA_3, 4: _SCHEMA_4}
"""The statements that take a database from the version before each key to that version."""


@contextmanager
def transaction(db: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    """One transaction on `db` (opened without Python's own, `isolation_level=None`): committed
    when the block ends, rolled back when it raises."""
    db.execute(begin)
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def refuse_a_foreign_database(db: sqlite3.Connection, path: Path) -> None:
    """Raise a `StoreError` when the file holds another program's tables.

    Before anything writes (even the journal mode is written into the file's header): a
    database with tables but no schema version of ours belongs to another program.
    """
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version == 0 and db.execute("SELECT 1 FROM sqlite_master").fetchone():
        raise damaged(path, "it holds another program's tables")


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Take the database up to `SCHEMA_VERSION`, all steps in one transaction.

    Raises:
        StoreError: A newer moot wrote it.
    """
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version == SCHEMA_VERSION:
        return
    _refuse_newer(version, path)  # before the write lock: a read-only file says so too
    with transaction(db):
        # Read again under the write lock: another process may have just created the schema.
        (version,) = db.execute("PRAGMA user_version").fetchone()
        _refuse_newer(version, path)
        # Every step from the file's version up runs in this one transaction, so a database
        # is never left between versions (a new file starts at 0 and takes them all).
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in _MIGRATIONS[step]:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _refuse_newer(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer moot (schema version {version}; this one "
            f"reads up to {SCHEMA_VERSION}): update moot, or set MOOT_HOME to use another "
            f"directory",
            path,
        )


def make_private(path: Path) -> None:
    """Make the database's directory and the file itself readable by this user only (they
    hold what the model read): missing directories 0700, a new file 0600, which SQLite's
    `-wal` and `-shm` files copy; a file an older moot made 0644 is tightened, its side
    files too. Before SQLite opens it, which would make the file with the umask's mode."""
    from moot.paths import PRIVATE_FILE, keep_private, make_private_dir

    make_private_dir(path.parent)
    if not os.path.lexists(path):
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        with contextlib.suppress(FileExistsError):  # another moot made it meanwhile
            os.close(os.open(path, flags, PRIVATE_FILE))
    for name in ("", "-wal", "-shm"):
        keep_private(path.with_name(path.name + name))
