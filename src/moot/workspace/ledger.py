"""What a session last saw of each file, so edits never clobber changes made behind its back.

Each read or write records the file's (mtime_ns, size, sha256). Before an edit or an
overwrite the file on disk is compared with that record: the content hash decides (an mtime
can stay the same across a quick rewrite), the size short-cuts it. Files too large to hash
on read are recorded by mtime and size alone.

When the file tools work through an editor's buffers (over ACP), what the session saw is the
editor's text, which the disk need not hold: `record_text` and `check_text` keep and compare
the hash of that text instead.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import msgspec


class FileStateError(Exception):
    """A file is not in the state an edit or overwrite needs; the message says what to do."""


class NotReadError(FileStateError):
    """Overwriting a file that this session has not read."""


class StaleFileError(FileStateError):
    """The file changed on disk since this session last read or wrote it."""


class FileStamp(msgspec.Struct, frozen=True):
    """A file as the session last saw it."""

    mtime_ns: int
    size: int
    sha256: str | None
    """Hex digest of the content; None when only part of a large file was read."""


class ReadLedger:
    """Per session (one per `Workspace`): the stamp of every file read or written.

    Safe to use from the worker threads that sync tools run in.
    """

    def __init__(self) -> None:
        self._stamps: dict[Path, FileStamp] = {}
        self._texts: dict[Path, str] = {}  # the hash of the editor's text the session saw
        self._lock = threading.Lock()

    def record(self, path: Path, st: os.stat_result, content: bytes | None) -> FileStamp:
        """Remember `path` as it is now.

        Args:
            path: The real path of the file.
            st: Its status when `content` was read or written.
            content: The whole content, or None when it was not all read.

        Returns:
            The stamp recorded.
        """
        digest = hashlib.sha256(content).hexdigest() if content is not None else None
        stamp = FileStamp(st.st_mtime_ns, st.st_size, digest)
        with self._lock:
            self._stamps[path] = stamp
        return stamp

    def stamp(self, path: Path) -> FileStamp | None:
        """The stamp recorded for `path`, if the session has read or written it."""
        with self._lock:
            return self._stamps.get(path)

    def forget(self, path: Path) -> None:
        """Drop the record of `path` (e.g. after the file was deleted)."""
        with self._lock:
            self._stamps.pop(path, None)
            self._texts.pop(path, None)

    def record_text(self, path: Path, text: str) -> None:
        """Remember the editor's text of `path` as the session read or wrote it."""
        with self._lock:
            self._texts[path] = _digest(text)

    def check_text(self, path: Path, text: str, *, must_have_read: bool = False) -> None:
        """Refuse when the editor's `text` of `path` is not what the session last saw of it.

        A file seen only on disk compares with that (its UTF-8 bytes); one never seen passes,
        unless `must_have_read` (an overwrite).

        Raises:
            NotReadError: `must_have_read`, and the session never read or wrote `path`.
            StaleFileError: The editor's text changed since.
        """
        with self._lock:
            seen = self._texts.get(path)
            stamp = self._stamps.get(path)
        if seen is None and stamp is not None:
            seen = stamp.sha256
        if seen is None and (stamp is not None or not must_have_read):
            return  # only part of a large file was read: nothing to compare
        if seen is None:
            raise NotReadError(_NOT_READ)
        if _digest(text) != seen:
            raise StaleFileError(
                "the file changed in the editor since it was last read; read it again first"
            )

    def check_fresh(self, path: Path, current: bytes | None = None) -> None:
        """Refuse when `path` changed on disk since the session last read or wrote it.

        A file the session never saw passes; see `require_read` for overwrites.

        Args:
            path: The real path of the file.
            current: Its content now, when the caller already read it (saves a read).

        Raises:
            StaleFileError: The content (or, for unhashed stamps, mtime or size) differs.
            OSError: The file cannot be read.
        """
        stamp = self.stamp(path)
        if stamp is None:
            return
        if current is None or stamp.sha256 is None:
            st = os.stat(path)
            if stamp.sha256 is None:
                if (st.st_mtime_ns, st.st_size) != (stamp.mtime_ns, stamp.size):
                    raise _stale()
                return
            if st.st_size != stamp.size:
                raise _stale()
            current = path.read_bytes()
        if len(current) != stamp.size or hashlib.sha256(current).hexdigest() != stamp.sha256:
            raise _stale()

    def require_read(self, path: Path, current: bytes | None = None) -> None:
        """Refuse unless the session has read `path` and it has not changed since.

        Raises:
            NotReadError: Never read (or written) in this session.
            StaleFileError: Changed on disk since.
        """
        if self.stamp(path) is None:
            raise NotReadError(_NOT_READ)
        self.check_fresh(path, current)


_NOT_READ = (
    "the file exists and has not been read in this session; read it first so that nothing in"
    " it is lost"
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _stale() -> StaleFileError:
    return StaleFileError("the file changed on disk since it was last read; read it again first")
