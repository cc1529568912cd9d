"""Copying SQLite's write-ahead log into the database file on a thread of its own.

SQLite keeps each committed transaction in the WAL and copies the log into the database file at
a *checkpoint* (SQLite's word: not the session checkpoints of `SQLiteStore.save_checkpoint`).
By default the connection that commits runs one whenever the log passes 1,000 pages, with an
fsync of the log and one of the database: every ~280th append stalled the agent loop for
~20 ms, about a quarter of its mean overhead per step (`scripts/bench --only loop`).

`WalCheckpointer` runs those checkpoints on its own thread and connection instead (SQLite
releases the interpreter lock while it copies and syncs). Nothing about durability changes: a
commit is as safe the moment it is in the log (`synchronous = NORMAL`) whoever copies it
later, and the checkpoint still syncs before the log is reused.

The store's own connection keeps an automatic checkpoint at `BACKSTOP_PAGES`: SQLite starts
the log over only after a checkpoint that left nothing uncopied, which one running beside a
stream of appends never does, so while a run appends without pause the log grows to the
backstop, whose checkpoint then has little left to copy (it costs its two fsyncs, once per
~2,800 appends instead of every ~280). It also holds the log's size when this thread cannot
run or falls behind.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

EVERY_COMMITS = 250
"""Appends between checkpoints: an event takes ~3.5 pages of log, so ~900 pages, about what
SQLite's own default (1,000 pages) copies at a time."""
BACKSTOP_PAGES = 10_000
"""The store connection's own automatic checkpoint (SQLite's `wal_autocheckpoint`), in pages
of 4 KiB: the log file grows to ~40 MB at most while the store is open (SQLite removes it when
the last connection closes)."""


class WalCheckpointer:
    """Checkpoints `path`'s WAL every `every` commits, on a thread started at the first."""

    def __init__(self, path: Path, every: int = EVERY_COMMITS) -> None:
        # Absolute now (the thread opens it later, perhaps after a chdir), and opened for
        # reading and writing only: never a new, empty database where the store's is missing.
        self._uri = f"{path.absolute().as_uri()}?mode=rw"
        self._every = every
        self._commits = 0
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None

    def committed(self) -> None:
        """Count one commit (called under the store's lock); every `every`th wakes the thread."""
        self._commits += 1
        if self._commits % self._every or self._closing:
            return
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="moot-wal-checkpoint", daemon=True
            )
            self._thread.start()
        self._wake.set()

    def close(self) -> None:
        """Stop the thread, after the checkpoint it is running, if any."""
        self._closing = True
        if self._thread is not None:
            self._wake.set()
            self._thread.join()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._uri, uri=True, isolation_level=None)
        except sqlite3.Error:
            return  # the store's own automatic checkpoints still run
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closing:
                    return
                # Busy (another process is checkpointing, say): the next wake tries again.
                with contextlib.suppress(sqlite3.Error):
                    # PASSIVE: copy what no reader still needs, never wait for or block a
                    # writer (the loop appends meanwhile).
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            db.close()
