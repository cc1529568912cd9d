"""The host's side of syncing a workspace with a remote engine's volume (`docker_remote`):
walking this machine's workspace, the tar a push sends, and writing what a pull brings back
without following a link out of the workspace or keeping a set-id bit."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import posixpath
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Literal

import msgspec

SYNC_MAX_BYTES = 2 * 1024**3
"""What one push or pull moves at most."""
SPOOL_BYTES = 64 * 1024**2
"""A tar held in memory up to this size, then in a temporary file."""

Kind = Literal["f", "d", "l"]


Skip = Callable[[str], bool]
"""Whether a workspace-relative path (and what lies below it) is left out of a sync."""


class RemoteSyncError(RuntimeError):
    """A sync went past its bound, or the engine failed during one; the message says which."""


class Entry(msgspec.Struct, frozen=True):
    """A workspace path as the last sync left it on both sides."""

    kind: Kind
    size: int
    mtime_ns: int
    mode: int
    """Permission bits (no set-id, no type)."""
    digest: str = ""
    """A file's sha256, a link's target; "" for a directory."""

    def same_on_host(self, info: os.stat_result) -> bool:
        """Whether this machine's copy is still the one synced (by size, time and mode)."""
        kind = kind_of(info.st_mode)
        if kind != self.kind or kind == "d":
            return kind == self.kind
        return (info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode) & 0o777) == (
            self.size,
            self.mtime_ns,
            self.mode,
        )


class SyncTar:
    """A tar for `put_archive`, in memory up to `SPOOL_BYTES`, bounded by `SYNC_MAX_BYTES`."""

    def __init__(self) -> None:
        # Both closed by `finish` (or with the spool by the caller): they outlive this call.
        self.spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115
        self.tar = tarfile.open(fileobj=self.spool, mode="w", format=tarfile.PAX_FORMAT)  # noqa: SIM115
        self.count = 0
        self.size = 0

    def add_dir(self, name: str, mode: int, mtime: float | None = None) -> None:
        info = self._info(name, mode, mtime)
        info.type = tarfile.DIRTYPE
        self.tar.addfile(info)

    def add_file(self, name: str, data: bytes, mode: int, mtime: float | None = None) -> None:
        self.size += len(data)
        if self.size > SYNC_MAX_BYTES:
            raise RemoteSyncError(
                f"more than {SYNC_MAX_BYTES >> 20} MiB of the workspace changed since the last"
                " sync with the remote engine: too much to copy in one go"
            )
        info = self._info(name, mode, mtime)
        info.size = len(data)
        self.tar.addfile(info, io.BytesIO(data))

    def add_host(self, workspace: Path, rel: str, info: os.stat_result) -> Entry | None:
        """Add this machine's `rel`; its entry as synced, or None when it vanished."""
        kind = kind_of(info.st_mode)
        mode = stat.S_IMODE(info.st_mode) & 0o777
        name = f"ws/{rel}"
        if kind == "d":
            self.add_dir(name, mode, info.st_mtime)
            return entry_of(info, "")
        if kind == "l":
            try:
                target = os.readlink(workspace / rel)
            except OSError:
                return None
            link = self._info(name, 0o777, info.st_mtime)
            link.type = tarfile.SYMTYPE
            link.linkname = target
            self.tar.addfile(link)
            return entry_of(info, target)
        try:
            fd = os.open(workspace / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as file:
            now = os.fstat(file.fileno())
            if not stat.S_ISREG(now.st_mode):
                return None
            data = file.read()
        self.add_file(name, data, mode, now.st_mtime)
        return entry_of(now, hashlib.sha256(data).hexdigest())

    def finish(self) -> IO[bytes]:
        """The tar, from its start; the caller closes it."""
        self.tar.close()
        self.spool.seek(0)
        return self.spool

    def _info(self, name: str, mode: int, mtime: float | None) -> tarfile.TarInfo:
        self.count += 1
        info = tarfile.TarInfo(name)
        info.mode = mode & 0o777
        info.uid, info.gid = os.getuid(), os.getgid()
        info.mtime = time.time() if mtime is None else mtime
        return info


def kind_of(mode: int) -> Kind | None:
    if stat.S_ISDIR(mode):
        return "d"
    if stat.S_ISLNK(mode):
        return "l"
    return "f" if stat.S_ISREG(mode) else None


def entry_of(info: os.stat_result, digest: str) -> Entry:
    kind = kind_of(info.st_mode) or "f"
    mode = stat.S_IMODE(info.st_mode) & 0o777
    return Entry(kind, info.st_size, info.st_mtime_ns, mode, digest)


def walk(root: Path, skip: Skip, prefix: str = "") -> Iterator[tuple[str, os.stat_result]]:
    """Regular files, directories and links below `root`, never through a link."""
    try:
        entries = list(os.scandir(root / prefix if prefix else root))
    except OSError:
        return
    for entry in entries:
        rel = f"{prefix}{entry.name}"
        if skip(rel):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if kind_of(info.st_mode) is None:
            continue  # sockets, fifos, devices stay here
        yield rel, info
        if stat.S_ISDIR(info.st_mode):
            yield from walk(root, skip, f"{rel}/")


def member_path(name: str) -> str | None:
    """A tar member's workspace-relative path; None for `.` or one that would leave it."""
    path = posixpath.normpath(name)
    if path in (".", "") or path.startswith(("/", "../")) or path == "..":
        return None
    return path


def parents_are_dirs(workspace: Path, rel: str, make: bool = False) -> bool:
    """Whether every directory above `rel` is a directory here, not a link (made when
    `make` and missing): nothing is written through a link out of the workspace."""
    current = workspace
    for part in rel.split("/")[:-1]:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except FileNotFoundError:
            if not make:
                return False
            os.mkdir(current, 0o755)
    return True


def write_here(
    workspace: Path, rel: str, kind: Kind, data: bytes, target: str, mode: int
) -> os.stat_result | None:
    """Write one path here as the volume has it; its status after, or None when a link or
    something else stands in the way."""
    try:
        if not parents_are_dirs(workspace, rel, make=True):
            return None
        path = workspace / rel
        if kind == "d":
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, 0o755)
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
            os.chmod(path, mode or 0o755, follow_symlinks=False)
            return os.lstat(path)
        if os.path.islink(path) or (kind == "l" and os.path.lexists(path)):
            os.unlink(path)
        if kind == "l":
            os.symlink(target, path)
            return os.lstat(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        fd = os.open(path, flags, mode)
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            os.fchmod(file.fileno(), mode)  # never a set-id bit: `mode` has none
            return os.fstat(file.fileno())
    except OSError:
        return None
