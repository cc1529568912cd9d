"""Set-user-ID and set-group-ID bits a command left on workspace files, cleared as it ends.

A command's files land on the host's disk with the ids it runs as: as root, `chmod 4755` on
a copy of a shell is a program that gives any local user uid 0. Bubblewrap's kernel filter
refuses the bits as they are asked for (`seccomp`); a Docker container cannot be given that
filter without dropping Docker's own, and a bind mount cannot be made `nosuid` there, so
the Docker backend (and bubblewrap where the filter cannot be had) clears the bits instead,
as each command ends (`SetIdSweep`): from every regular file in the workspace that the user
moot runs as owns and whose status changed since the oldest command still running began.
A command can only set the bits on a file it owns (it holds no capability), so no other
user's file is touched; directories are left alone (a set-group-ID directory only gives
new entries its group). While a command runs, what it made is there on the disk: a
background command that sets the bit and sleeps keeps it until it ends.

Each file is opened without following links and changed through that descriptor, so a
command that swaps a file for a link as the sweep runs cannot turn it on the link's target.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from pathlib import Path

from msgspec.structs import replace

from moot.sandbox.base import CommandResult

SET_ID = stat.S_ISUID | stat.S_ISGID
SLACK_NS = 2_000_000_000
"""How much earlier than a command's start a file's status change still counts: the kernel
stamps it with a coarse clock, a tick or so behind the one `time.time_ns` reads."""
NOTE = (
    "moot cleared the set-user-ID/set-group-ID bits of {paths}: set-id files are not allowed"
    " in the workspace (they would give any user of this machine the sandbox user's rights)."
)


def clear_set_id(root: Path, since_ns: int = 0) -> list[str]:
    """Clear the set-id bits of the regular files below `root` that this user owns and whose
    status changed at `since_ns` or later (a blocking walk of the whole tree).

    The walk holds one descriptor per level of the directory it is in, never one per
    directory waiting its turn: a command that made more directories than this process may
    open files (`mkdir d{1..2000}`) hid what lay in the last of them. A directory of this
    user's that it cannot read (a command's `chmod 000 d`) is given back its owner's read and
    search bits and swept whole, whatever `since_ns` says: the bits inside were set before it
    was locked, maybe by an earlier command, and would otherwise stay until a later command
    unlocked it, their status unchanged.

    Returns:
        The files changed, relative to `root`, in the order found.
    """
    cleared: list[str] = []
    uid = os.getuid()
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return cleared
    # Each frame: a directory's descriptor, its path, the subdirectories left to visit, and
    # the change time from which a file counts in it.
    frames: list[tuple[int, str, list[str], int]] = []
    frames.append((top, "", _sweep_files(top, "", since_ns, uid, cleared), since_ns))
    while frames:
        fd, rel, pending, since = frames[-1]
        if not pending:
            os.close(fd)
            frames.pop()
            continue
        name = pending.pop()
        child, child_since = _open_dir(fd, name, uid, since)
        if child is None:
            continue
        path = f"{rel}{name}/"
        frames.append(
            (child, path, _sweep_files(child, path, child_since, uid, cleared), child_since)
        )
    return cleared


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(parent: int, name: str, uid: int, since: int) -> tuple[int | None, int]:
    """A descriptor of the subdirectory `name` and the change time that counts in it: 0 for a
    directory of this user's that was locked (its owner may not read or search it: given
    those bits back; root reads it anyway, an unprivileged user only then)."""
    try:
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return None, since  # gone
    try:
        info = os.fstat(fd)
        if not stat.S_ISDIR(info.st_mode):
            return None, since  # swapped for something else as the sweep ran
        owner_may = stat.S_IRUSR | stat.S_IXUSR
        if info.st_uid == uid and info.st_mode & owner_may != owner_may:
            os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(info.st_mode) | owner_may)
            since = 0
        return os.open(name, _DIR_FLAGS, dir_fd=parent), since
    except OSError:
        return None, since  # not ours to read: the command could not have written there either
    finally:
        os.close(fd)


def _sweep_files(fd: int, rel: str, since: int, uid: int, cleared: list[str]) -> list[str]:
    """Clear the set-id files directly in the directory `fd`; its subdirectories' names."""
    subdirectories: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    subdirectories.append(entry.name)
                elif entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        mine = info.st_uid == uid and info.st_ctime_ns >= since
                        if info.st_mode & SET_ID and mine and _clear(fd, entry.name):
                            cleared.append(f"{rel}{entry.name}")
    except OSError:
        pass  # gone, or not ours to read: the command could not have written there either
    subdirectories.reverse()  # popped from the end: visited in the order listed
    return subdirectories


def _clear(directory: int, name: str) -> bool:
    """Clear the bits of `name` in `directory` if it is (still) a regular set-id file of
    this user's, through a descriptor of it; whether it did."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not info.st_mode & SET_ID:
            return False
        if info.st_uid != os.getuid():
            return False
        # An O_PATH descriptor takes no fchmod; its /proc link reaches the same inode.
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(info.st_mode) & ~SET_ID)
        return True
    finally:
        os.close(fd)


class SetIdSweep:
    """Clears set-id bits after each command of one sandbox (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._running: dict[int, int] = {}
        """Each command still running (or being swept after): when it began, less the slack."""
        self._count = 0

    def begin(self) -> int:
        """Note that a command starts now; returns the token `end` takes."""
        self._count += 1
        self._running[self._count] = time.time_ns() - SLACK_NS
        return self._count

    async def end(self, token: int) -> list[str]:
        """The command `token` ended: clear what changed since the oldest command still
        running began (a command running alongside may have set bits too); returns the files
        cleared."""
        since = min(self._running.values(), default=0)
        try:
            return await asyncio.to_thread(clear_set_id, self.root, since)
        finally:
            self._running.pop(token, None)


def with_cleared(result: CommandResult, paths: list[str]) -> CommandResult:
    """`result`, its stderr telling which files `SetIdSweep` cleared (as it is for none)."""
    if not paths:
        return result
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    gap = "\n" if result.stderr and not result.stderr.endswith("\n") else ""
    return replace(result, stderr=f"{result.stderr}{gap}{NOTE.format(paths=shown)}\n")
