"""One writer per session: a claim a runtime holds for as long as it serves the session.

Two runtimes appending to one session would interleave their runs (a second `moot --resume`
of a live run once appended into it and then waited forever for an end the first process
wrote). So every `Runtime` claims its session from the store first, and a second claim is
refused at once, naming the holder; nothing ever waits for a claim.

The SQLite store's claim is an OS lock (`flock`) on a file per session in a directory beside
the database (`sessions.db-locks/`, named as SQLite names its own side files). The kernel
releases it when the holder exits in any way, `kill -9` included, so a dead holder's claim is
simply free, and a process id reused since cannot keep it. Reading the database needs no
claim: `moot sessions list` works while a session is live.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Self

from moot.paths import make_private_dir

_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,100}")
_ATTEMPTS = 20


class SessionBusy(RuntimeError):
    """The session is claimed by another runtime, in this process or another one."""

    def __init__(self, session_id: str, holder: str) -> None:
        super().__init__(session_id, holder)
        self.session_id = session_id
        self.holder = holder

    def __str__(self) -> str:
        return (
            f"session {self.session_id} is in use by {self.holder}; wait for it to end, or "
            f"stop it, then try again"
        )


class SessionClaim:
    """A held claim. `release()` (or leaving its `with` block) frees it; so does dropping it."""

    def __init__(self, let_go: Callable[..., None], *args: object) -> None:
        # A finalizer, not `__del__`: it runs once, at `release()` or when the claim is
        # dropped, whichever comes first (and never refers back to the claim).
        self._release = weakref.finalize(self, let_go, *args)

    @property
    def held(self) -> bool:
        return self._release.alive

    def release(self) -> None:
        """Free the session for another runtime; releasing twice changes nothing."""
        self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def lock_file(directory: Path, session_id: str) -> Path:
    """The file whose lock is `session_id`'s claim; a safe name, whatever the id holds."""
    if _SAFE_NAME.fullmatch(session_id):
        name = session_id
    else:  # an id a library user chose: never a path
        import hashlib  # here: OpenSSL loads with it (~4 ms), and moot's own ids never need it

        name = "id-" + hashlib.sha256(session_id.encode()).hexdigest()
    return directory / f"{name}.lock"


def claim_by_lock(directory: Path, session_id: str) -> SessionClaim:
    """Claim a session by an exclusive `flock` on its lock file in `directory`.

    Raises:
        SessionBusy: Another open file holds the lock (another process, or another runtime
            of this one).
        OSError: The directory or the file cannot be made.
    """
    make_private_dir(directory)
    path = lock_file(directory, session_id)
    for _ in range(_ATTEMPTS):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise SessionBusy(session_id, holder) from None
        except BaseException:
            os.close(fd)
            raise
        # A holder unlinks its file as it lets go: the file locked may no longer be the one
        # at `path`, which a third process could lock too. Only the file at `path` counts.
        if _same_file(fd, path):
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            return SessionClaim(_let_go, fd, path)
        os.close(fd)
    raise SessionBusy(session_id, "other processes claiming it at the same moment")


def _same_file(fd: int, path: Path) -> bool:
    try:
        there = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


def _holder(fd: int) -> str:
    """Who holds the lock, as its file says (the pid it wrote)."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).decode().strip())
        if pid == os.getpid():
            return "another runtime in this process"
        return f"another moot process (pid {pid})"
    return "another moot process"


def _let_go(fd: int, path: Path) -> None:
    # Unlinked while still locked, so no one can lock this file after it is gone (see
    # `_same_file`); then the lock goes with the descriptor.
    with contextlib.suppress(OSError):
        if _same_file(fd, path):
            path.unlink()
    os.close(fd)


class ClaimTable:
    """Claims kept in memory, for a store that lives in one process (`MemoryStore`)."""

    def __init__(self) -> None:
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def claim(self, session_id: str) -> SessionClaim:
        """Raises: SessionBusy: the session is claimed and not yet released."""
        with self._lock:
            if session_id in self._held:
                raise SessionBusy(session_id, "another runtime in this process")
            self._held.add(session_id)
        return SessionClaim(self._free, session_id)

    def _free(self, session_id: str) -> None:
        with self._lock:
            self._held.discard(session_id)
