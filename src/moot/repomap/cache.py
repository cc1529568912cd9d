"""The repository map's cache of parsed files: one SQLite database per workspace.

Three tables. `files` holds, per path, the `(mtime_ns, size, language)` the file had when it
was read and a digest of its content (BLAKE2b, 16 bytes); `tags` holds the tags of each
content, keyed by that digest and the language. A file whose stat still agrees is not read
again; one whose stat changed but whose content did not (a `git checkout`, a `touch`, a copy
of another file) is read and hashed but not parsed. `maps` holds the last few rendered maps,
by a key naming every mapped file's path and content (`RepoIndex.content_key`): a new session
over files that did not change answers its first map from there, without decoding 60,000
files' tags or ranking them again. `looks` holds the last few looks as later sessions use them
(`moot.repomap.saved_look`): which files a listing's sources are and a digest of their stats,
so a session whose files all stat as saved finds that map without reading a row of `files`
or `tags`. The database lives in the user cache
directory (`moot.paths.cache_dir()/repomap/`), so it survives restarts and never adds files
to the workspace. It can be deleted at any time: it is rebuilt on the next map.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import time
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from moot.paths import cache_dir

SCHEMA_VERSION = 2
"""Bump when the tags a parse yields change (queries, extraction, the encoding): a cache
written with another version is emptied on open."""
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS files (
        path TEXT PRIMARY KEY,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        language TEXT NOT NULL,
        digest BLOB NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS tags (
        digest BLOB NOT NULL,
        language TEXT NOT NULL,
        tags BLOB,
        PRIMARY KEY (digest, language)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS files_content ON files (digest, language)",
    """
    CREATE TABLE IF NOT EXISTS maps (
        key BLOB PRIMARY KEY,
        made REAL NOT NULL,
        map BLOB NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE IF NOT EXISTS looks (
        listing BLOB PRIMARY KEY,
        made REAL NOT NULL,
        look BLOB NOT NULL
    ) WITHOUT ROWID
    """,
)


class _Kept(NamedTuple):
    """A table of blobs kept under a key, only the `most` made last (`maps`, `looks`)."""

    table: str
    key: str
    blob: str
    most: int


_MAPS = _Kept("maps", "key", "map", 4)
"""A session's first, unfocused, map and its budgets."""
_LOOKS = _Kept("looks", "listing", "look", 4)
"""Saved looks: a workspace seen with and without deny rules."""
_ALL_TAGS_FROM = 2_000
"""Fetching more contents' tags than this reads the whole table once rather than row by row."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class CachedFile(NamedTuple):
    """A row of `files`: what the file was when read, and which content it held."""

    mtime_ns: int
    size: int
    language: str
    digest: bytes


TagsKey = tuple[bytes, str]
"""A content's digest and its language: what its tags are stored under."""


def cache_path(root: Path) -> Path:
    """The database for the workspace at `root`: named by the root's name and a hash of it."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    name = _UNSAFE.sub("_", root.name)[:40] or "root"
    return cache_dir() / "repomap" / f"{name}-{digest}.sqlite3"


class TagCache:
    """An open cache database; use as a context manager."""

    def __init__(self, path: Path | None, *, threads: bool = False) -> None:
        """Open (or create) the database at `path`; None keeps the cache in memory only.

        A database that cannot be created or read (a read-only cache directory, a corrupt
        file) is replaced by an in-memory one: the map is still built, just not cached.

        Args:
            path: The database file.
            threads: Let other threads use the connection (the caller serialises them).
        """
        self._path = path
        self._threads = threads
        self._connection = _open(path, threads)
        self.rows_read = 0
        """Rows read from `files` and `tags` (what a new session's first look avoids)."""

    def __enter__(self) -> TagCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._connection.close()

    def load(self) -> dict[str, CachedFile]:
        """Every cached file, by path; none when the database cannot be read."""
        query = "SELECT path, mtime_ns, size, language, digest FROM files"
        rows = self._read(query, ())
        self.rows_read += len(rows)
        return {path: CachedFile(*rest) for path, *rest in rows}

    def tags(self, keys: Collection[TagsKey]) -> dict[TagsKey, bytes | None]:
        """The stored tags of these contents (None: left out, binary or too large); a content
        without a row is missing from the answer."""
        return self._select("tags", keys)

    def held(self, keys: Collection[TagsKey]) -> dict[TagsKey, bool]:
        """Whether the cache holds tags for these contents (False: left out, binary or too
        large), without reading them; a content without a row is missing from the answer."""
        return {key: bool(held) for key, held in self._select("tags IS NOT NULL", keys).items()}

    def _select(self, column: str, keys: Collection[TagsKey]) -> dict[TagsKey, Any]:
        if len(keys) > _ALL_TAGS_FROM:
            rows = self._read(f"SELECT digest, language, {column} FROM tags", ())
            self.rows_read += len(rows)
            return {(d, language): value for d, language, value in rows if (d, language) in keys}
        found: dict[TagsKey, Any] = {}
        for digest, language in keys:
            rows = self._read(
                f"SELECT {column} FROM tags WHERE digest = ? AND language = ?", (digest, language)
            )
            if rows:
                self.rows_read += 1
                found[(digest, language)] = rows[0][0]
        return found

    def update(
        self,
        stored: Iterable[tuple[str, CachedFile]],
        contents: Iterable[tuple[TagsKey, bytes | None]],
        forgotten: Iterable[str] = (),
    ) -> None:
        """Store files' rows and contents' tags, and drop the rows of files that are gone (and
        the tags no file holds any more), in one transaction.

        A database that is busy or read-only is left as it is: caching is best effort.
        """
        rows = [(path, *row) for path, row in stored]
        tags = [(digest, language, blob) for (digest, language), blob in contents]
        gone = [(path,) for path in forgotten]
        if not rows and not tags and not gone:
            return
        with contextlib.suppress(sqlite3.Error), self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)", rows
            )
            self._connection.executemany("INSERT OR REPLACE INTO tags VALUES (?, ?, ?)", tags)
            if gone:
                self._connection.executemany("DELETE FROM files WHERE path = ?", gone)
                self._connection.execute(
                    "DELETE FROM tags WHERE NOT EXISTS (SELECT 1 FROM files"
                    " WHERE files.digest = tags.digest AND files.language = tags.language)"
                )

    def saved_map(self, key: bytes) -> bytes | None:
        """The map stored under `key` (`save_map`), if any."""
        return self._kept(_MAPS, key)

    def save_map(self, key: bytes, blob: bytes) -> None:
        """Store a map under `key`, keeping only the few made last (best effort)."""
        self._keep(_MAPS, key, blob)

    def saved_look(self, listing: bytes) -> bytes | None:
        """The look stored under `listing` (`save_look`), if any."""
        return self._kept(_LOOKS, listing)

    def save_look(self, listing: bytes, blob: bytes) -> None:
        """Store a look under `listing`, keeping only the few made last (best effort)."""
        self._keep(_LOOKS, listing, blob)

    def _kept(self, kind: _Kept, key: bytes) -> bytes | None:
        rows = self._read(f"SELECT {kind.blob} FROM {kind.table} WHERE {kind.key} = ?", (key,))
        return rows[0][0] if rows else None

    def _keep(self, kind: _Kept, key: bytes, blob: bytes) -> None:
        table = kind.table
        with contextlib.suppress(sqlite3.Error), self._connection:
            self._connection.execute(
                f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?)", (key, time.time(), blob)
            )
            self._connection.execute(
                f"DELETE FROM {table} WHERE {kind.key} NOT IN"
                f" (SELECT {kind.key} FROM {table} ORDER BY made DESC LIMIT ?)",
                (kind.most,),
            )

    def _read(self, query: str, parameters: tuple[object, ...]) -> list[tuple]:
        try:
            return self._connection.execute(query, parameters).fetchall()
        except sqlite3.OperationalError:  # busy for too long: build without it this time
            return []
        except sqlite3.DatabaseError:  # damaged: start a new one
            self._connection.close()
            if self._path is not None:
                _remove(self._path)
            self._connection = _open(self._path, self._threads)
            return []


def _open(path: Path | None, threads: bool) -> sqlite3.Connection:
    if path is not None:
        for _ in range(2):
            try:
                return _connect(str(path), threads)
            except (OSError, sqlite3.OperationalError):  # unwritable, locked for too long
                break
            except sqlite3.DatabaseError:  # not a database, or corrupt: start again
                _remove(path)
    return _connect(":memory:", threads)


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink()


def _connect(target: str, threads: bool) -> sqlite3.Connection:
    if target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    # timeout: two maps of one workspace may be built at once (read-only tools run together).
    connection = sqlite3.connect(
        target, timeout=5.0, isolation_level=None, check_same_thread=not threads
    )
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version != SCHEMA_VERSION:
            connection.execute("DROP TABLE IF EXISTS files")
            connection.execute("DROP TABLE IF EXISTS tags")
            connection.execute("DROP TABLE IF EXISTS looks")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        for table in _SCHEMA:
            connection.execute(table)
    except BaseException:
        connection.close()
        raise
    # Back to Python's default transaction handling: `with connection` commits the updates.
    connection.isolation_level = ""  # type: ignore[assignment]  # typeshed lacks the default
    return connection
