"""The repository map's cache of parsed files: one SQLite database per workspace.

A row holds one file's tags, keyed by its path and the `(mtime_ns, size, language)` it had
when it was parsed; a file whose stat still agrees is not read again. The database lives in
the user cache directory (`moot.paths.cache_dir()/repomap/`), so it survives restarts and never
adds files to the workspace. It can be deleted at any time: it is rebuilt on the next map.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from moot.paths import cache_dir

SCHEMA_VERSION = 1
"""Bump when the tags a parse yields change (queries, extraction, the JSON layout): a cache
written with another version is emptied on open."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    language TEXT NOT NULL,
    tags TEXT NOT NULL
) WITHOUT ROWID
"""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class CachedFile(NamedTuple):
    """A row of the cache: what the file was when parsed, and its tags as JSON."""

    mtime_ns: int
    size: int
    language: str
    tags: str


def cache_path(root: Path) -> Path:
    """The database for the workspace at `root`: named by the root's name and a hash of it."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    name = _UNSAFE.sub("_", root.name)[:40] or "root"
    return cache_dir() / "repomap" / f"{name}-{digest}.sqlite3"


class TagCache:
    """An open cache database; use as a context manager, one per build of the map."""

    def __init__(self, path: Path | None) -> None:
        """Open (or create) the database at `path`; None keeps the cache in memory only.

        A database that cannot be created or read (a read-only cache directory, a corrupt
        file) is replaced by an in-memory one: the map is still built, just not cached.
        """
        self._path = path
        self._connection = _open(path)

    def __enter__(self) -> TagCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def load(self) -> dict[str, CachedFile]:
        """Every cached file, by path; none when the database cannot be read."""
        query = "SELECT path, mtime_ns, size, language, tags FROM files"
        try:
            return {path: CachedFile(*rest) for path, *rest in self._connection.execute(query)}
        except sqlite3.OperationalError:  # busy for too long: build without it this time
            return {}
        except sqlite3.DatabaseError:  # damaged: start a new one
            self._connection.close()
            if self._path is not None:
                _remove(self._path)
            self._connection = _open(self._path)
            return {}

    def update(self, stored: Iterable[tuple[str, CachedFile]], forgotten: Iterable[str]) -> None:
        """Store new rows and drop the rows of files that are gone, in one transaction.

        A database that is busy or read-only is left as it is: caching is best effort.
        """
        rows = [(path, *row) for path, row in stored]
        gone = [(path,) for path in forgotten]
        if not rows and not gone:
            return
        with contextlib.suppress(sqlite3.Error), self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)", rows
            )
            self._connection.executemany("DELETE FROM files WHERE path = ?", gone)


def _open(path: Path | None) -> sqlite3.Connection:
    if path is not None:
        for _ in range(2):
            try:
                return _connect(str(path))
            except (OSError, sqlite3.OperationalError):  # unwritable, locked for too long
                break
            except sqlite3.DatabaseError:  # not a database, or corrupt: start again
                _remove(path)
    return _connect(":memory:")


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink()


def _connect(target: str) -> sqlite3.Connection:
    if target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    # timeout: two maps of one workspace may be built at once (read-only tools run together).
    connection = sqlite3.connect(target, timeout=5.0, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version != SCHEMA_VERSION:
            connection.execute("DROP TABLE IF EXISTS files")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute(_SCHEMA)
    except BaseException:
        connection.close()
        raise
    # Back to Python's default transaction handling: `with connection` commits the updates.
    connection.isolation_level = ""  # type: ignore[assignment]  # typeshed lacks the default
    return connection
