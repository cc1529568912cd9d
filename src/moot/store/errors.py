"""What goes wrong with the sessions database itself, said in one line a person can act on.

A damaged or foreign file, a read-only directory, a full disk or a lock held too long by
another process all reach the caller as a `StoreError` naming the file and what to do; a
front end prints its message, never a traceback. moot never repairs a file it cannot read (it
neither deletes nor rewrites it): the person decides what happens to it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

# The primary result codes (the low byte of an extended one), from sqlite3.h.
_PERM = 3
_BUSY = 5
_LOCKED = 6
_READONLY = 8
_IOERR = 10
_CORRUPT = 11
_FULL = 13
_CANTOPEN = 14
_AUTH = 23
_NOTADB = 26
_ELSEWHERE = "or set MOOT_HOME to another directory"


class StoreError(RuntimeError):
    """The sessions database cannot be opened, read or written; the message names the file
    and what to do about it."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


def damaged(path: Path, detail: str) -> StoreError:
    """A file moot cannot read as its database: left as it is, for the person to move."""
    return StoreError(
        f"{path} is not a moot sessions database, or is damaged ({detail}); moot has not "
        f"changed it. Move it aside (mv {path} {path}.broken) to start an empty one, "
        f"{_ELSEWHERE}",
        path,
    )


def from_sqlite(exc: sqlite3.Error, path: Path, busy_timeout_s: float) -> StoreError:
    """The `StoreError` that says what `exc` (raised working on `path`) means for the person."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_CORRUPT, _NOTADB):
        return damaged(path, str(exc))
    if code == _FULL:
        return StoreError(f"cannot write {path}: the disk is full; free some space", path)
    if code in (_READONLY, _PERM, _AUTH):
        return StoreError(
            f"cannot write {path} ({exc}): make it and {path.parent} writable, {_ELSEWHERE}",
            path,
        )
    if code == _CANTOPEN:
        why = _unwritable(path.parent) or "it must be a file, in a directory you can write"
        return StoreError(f"cannot open {path} ({exc}): {why}; {_ELSEWHERE}", path)
    if code in (_BUSY, _LOCKED):
        return StoreError(
            f"{path} stayed locked by another process for {busy_timeout_s:g} s; try again",
            path,
        )
    if code == _IOERR:
        return StoreError(
            f"cannot read or write {path} ({exc}): the disk may be full, failing, or over a "
            f"file size limit",
            path,
        )
    return StoreError(f"{path}: {exc}", path)


def from_os(exc: OSError, path: Path) -> StoreError:
    """The `StoreError` for an OS error making the database's directory or side files."""
    where = Path(exc.filename) if exc.filename else path.parent
    existing = next((p for p in (where, *where.parents) if p.exists()), where)
    why = _unwritable(existing) or f"{exc.strerror or exc}; make its directory writable"
    return StoreError(f"cannot create {where}: {why}, {_ELSEWHERE}", path)


def _unwritable(directory: Path) -> str | None:
    """Why `directory` cannot be written, when that is plain to see."""
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return f"{directory} is on a read-only file system"
    except OSError:
        return None
    if not os.access(directory, os.W_OK):
        return f"you have no permission to write {directory}"
    return None
