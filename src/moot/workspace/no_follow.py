"""Files below a trusted root, reached through directory descriptors that never follow a
symlink: opened for reading (`open_read`, `read_file_bytes`) and replaced atomically
(`AtomicWriter`, `atomic_write`), so a symlink swapped in after the path policy's check
(`moot.workspace.paths`) cannot redirect them, and a failed write never leaves half a file.
`PathRefused`, what the policy raises, is here too: these refuse a symlink on the way.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How each directory on the way is opened: never through a symlink."""


class PathRefused(Exception):
    """A path the policy does not allow; `rule` names the check that refused it."""

    def __init__(self, rule: str, path: str, detail: str = "") -> None:
        self.rule = rule
        """Short name of the rule: nul-byte, empty, outside-workspace, symlink, protected, ..."""
        self.path = path
        """The path as it was asked for."""
        message = f"Path refused ({rule}): {path!r}"  # repr: a NUL byte shows as \x00
        super().__init__(f"{message}: {detail}" if detail else message)


def open_dir_chain(root: Path, parts: tuple[str, ...], *, create: bool = False) -> int:
    """Open the directory `root/parts...` one component at a time, never following a symlink.

    Args:
        root: A trusted, symlink-free directory.
        parts: The components below it.
        create: Make missing directories (each relative to its opened parent).

    Returns:
        A file descriptor of the directory; the caller closes it.

    Raises:
        PathRefused: A component is a symlink (rule "symlink").
        OSError: A component is missing (and not `create`) or is not a directory.
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                # Made by someone else meanwhile? The O_NOFOLLOW open below decides.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                child = _open_component(part, fd, parts[: index + 1])
            except OSError as exc:
                _raise_if_symlink(exc, part, fd, parts[: index + 1])
                raise
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_component(part: str, dir_fd: int, where: tuple[str, ...]) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        _raise_if_symlink(exc, part, dir_fd, where)
        raise


def _raise_if_symlink(exc: OSError, part: str, dir_fd: int, where: tuple[str, ...]) -> None:
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
        return
    try:
        is_link = stat.S_ISLNK(os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return
    if is_link:
        raise PathRefused("symlink", "/".join(where), "is a symlink") from exc


def open_read(root: Path, target: Path) -> int:
    """Open a file inside `root` for reading without following any symlink on the way.

    `target` comes from `Workspace.resolve_read`, so it is already symlink-free; a symlink that
    appears there afterwards makes the open fail instead of leading elsewhere. FIFOs and
    devices do not block: the open is non-blocking, and callers check it is a regular file.

    Returns:
        A file descriptor; the caller closes it.

    Raises:
        PathRefused: A component turned into a symlink.
        OSError: Missing, a directory (`IsADirectoryError`), unreadable...
    """
    parts = target.relative_to(root).parts
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
    dir_fd = open_dir_chain(root, parts[:-1])
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            return os.open(parts[-1], flags, dir_fd=dir_fd)
        except OSError as exc:
            _raise_if_symlink(exc, parts[-1], dir_fd, parts)
            raise
    finally:
        os.close(dir_fd)


def read_file_bytes(root: Path, target: Path) -> tuple[bytes, os.stat_result]:
    """The content and status of a regular file inside `root`, opened as `open_read` does.

    Raises:
        PathRefused: A symlink on the way, or not a regular file (rule "not-a-file").
        OSError: Missing, a directory, unreadable...
    """
    with os.fdopen(open_read(root, target), "rb") as file:
        st = os.fstat(file.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(target))
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused("not-a-file", str(target), "not a regular file")
        return file.read(), st


class AtomicWriter:
    """Write a file inside the workspace all at once or not at all.

    Use as a context manager: write bytes to the file it yields; on a clean exit they are
    fsynced and renamed over the target, otherwise the temporary file is removed. The parent
    directory is opened component by component with `O_NOFOLLOW` (missing ones are made), the
    temporary file is created beside the target with `O_CREAT | O_EXCL | O_NOFOLLOW`, and all
    of it happens relative to that directory's descriptor. Right before the rename the path from
    the root is opened again and must still lead to the same directory, so a directory moved
    away and replaced by a symlink meanwhile is refused. An existing file keeps its mode.
    """

    def __init__(self, root: Path, target: Path, *, make_parents: bool = True) -> None:
        """Prepare a write of `target`, a path from `Workspace.resolve_write`.

        Args:
            root: The workspace root (trusted, symlink-free).
            target: The file to write, inside `root`.
            make_parents: Create missing parent directories.

        Raises:
            PathRefused: `target` is not below `root`.
        """
        if not target.is_relative_to(root) or target == root:
            raise PathRefused("outside-workspace", str(target), f"not below {root}")
        self._root = root
        self._parts = target.relative_to(root).parts
        self._make_parents = make_parents
        self._dir_fd = -1
        self._tmp_name = ""
        self._file: BinaryIO | None = None
        self.stat: os.stat_result | None = None
        """The written file's status once the write is committed (mtime and size for a ledger)."""
        self.existed = False
        """Whether the target existed when the write began."""
        self.snapshot_note = ""
        """Set by `Workspace.write_bytes`: why the previous content was not kept for a
        rewind ("" when it was, or when no snapshot was asked for)."""

    def __enter__(self) -> BinaryIO:
        self._dir_fd = open_dir_chain(self._root, self._parts[:-1], create=self._make_parents)
        try:
            mode = self._existing_mode()
            name = self._parts[-1]
            self._tmp_name = f".{name[:200]}.{secrets.token_hex(6)}.moot-tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(
                self._tmp_name, flags, 0o666 if mode is None else 0o600, dir_fd=self._dir_fd
            )
            if mode is not None:
                os.fchmod(fd, mode)
            self._file = os.fdopen(fd, "wb")
        except BaseException:
            self._abort()
            raise
        return self._file

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self._abort()
            return
        try:
            self._commit()
        except BaseException:
            self._abort()
            raise
        os.close(self._dir_fd)
        self._dir_fd = -1

    def _existing_mode(self) -> int | None:
        try:
            st = os.stat(self._parts[-1], dir_fd=self._dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        self._check_target(st)
        self.existed = True
        return stat.S_IMODE(st.st_mode)

    def _check_target(self, st: os.stat_result) -> None:
        where = "/".join(self._parts)
        if stat.S_ISLNK(st.st_mode):
            raise PathRefused("symlink", where, "the target is a symlink")
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", where)
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused("not-a-file", where, "only regular files can be written")

    def _commit(self) -> None:
        assert self._file is not None
        self._file.flush()
        os.fsync(self._file.fileno())
        self.stat = os.fstat(self._file.fileno())
        self._file.close()
        self._file = None
        self._check_parent_unchanged()
        try:
            st = os.stat(self._parts[-1], dir_fd=self._dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            self._check_target(st)
        os.replace(
            self._tmp_name, self._parts[-1], src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd
        )
        self._tmp_name = ""
        with contextlib.suppress(OSError):
            os.fsync(self._dir_fd)  # make the rename itself durable

    def _check_parent_unchanged(self) -> None:
        where = "/".join(self._parts)
        try:
            again = open_dir_chain(self._root, self._parts[:-1])
        except (OSError, PathRefused) as exc:
            raise PathRefused("symlink", where, "a parent directory changed while writing") from exc
        try:
            now, then = os.fstat(again), os.fstat(self._dir_fd)
        finally:
            os.close(again)
        if (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino):
            raise PathRefused("symlink", where, "a parent directory changed while writing")

    def _abort(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._dir_fd >= 0:
            if self._tmp_name:
                with contextlib.suppress(OSError):
                    os.unlink(self._tmp_name, dir_fd=self._dir_fd)
                self._tmp_name = ""
            os.close(self._dir_fd)
            self._dir_fd = -1


def atomic_write(root: Path, target: Path, data: bytes) -> AtomicWriter:
    """Write `data` to `target` atomically (see `AtomicWriter`).

    Returns:
        The committed writer: its `stat` is the new file's status, `existed` whether it
        replaced a file.
    """
    writer = AtomicWriter(root, target)
    with writer as file:
        file.write(data)
    return writer
