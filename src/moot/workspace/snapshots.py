"""File snapshots: what each file held before a run first changed it, so a rewind can undo it.

`Workspace.write_bytes` calls `FileSnapshots.before_change` right before it replaces a file.
The first call for a file in a run keeps the file's bytes as a content-addressed blob in the
store (or records that it did not exist); later calls in the same run change nothing, so the
snapshot is the state before the run, not before its last edit. `restore` writes those bytes
back exactly, through the same atomic, symlink-refusing writer the tools use, and removes the
files the run created.

A file larger than the cap (`snapshotMaxBytes` in settings, `DEFAULT_MAX_BYTES` by default) is
not kept: `before_change` does not read it and returns a note for the tool's result, since a
rewind will not restore it. It is left out of the run's snapshots altogether (never recorded
as absent, which would make a rewind delete it), and later changes in the same run keep
nothing for it either, so no snapshot ever holds a state from within the run.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import msgspec

from moot.workspace.no_follow import PathRefused, atomic_write, open_dir_chain, open_read

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
"""The largest file kept for a rewind unless settings say otherwise (`snapshotMaxBytes`)."""

if TYPE_CHECKING:
    from moot.store.base import Store


class RestoreFailure(msgspec.Struct, frozen=True):
    """A file `restore` could not put back."""

    path: str
    """Workspace-relative, with `/`."""
    reason: str


class RestoreError(Exception):
    """Some files could not be restored; the others were."""

    def __init__(self, restored: list[Path], failures: list[RestoreFailure]) -> None:
        self.restored = restored
        """The files that were put back."""
        self.failures = failures
        """The files that were not, and why."""
        listed = "; ".join(f"{f.path}: {f.reason}" for f in failures)
        super().__init__(f"could not restore {len(failures)} file(s): {listed}")


class FileSnapshots:
    """A session's file snapshots in a `Store`, for the files below one workspace root.

    Satisfies `moot.workspace.paths.SnapshotSink`; safe to call from tool worker threads.
    """

    def __init__(
        self,
        store: Store,
        session_id: str,
        root: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        """Keep snapshots of files below `root` under `session_id` in `store`.

        Args:
            store: Holds the blobs and snapshot records.
            session_id: The session the runs belong to.
            root: The workspace root (the same directory the `Workspace` has).
            max_bytes: Larger files are not kept (see the module docstring).
        """
        self.max_bytes = max_bytes
        self.store = store
        self.session_id = session_id
        self.root = Path(os.path.realpath(root))
        # What this process already recorded, to skip reading a file again on every write of a
        # run; the store's first-record-wins rule keeps it right without this cache too.
        self._seen: set[tuple[str, str]] = set()
        # Files a run changed that were too large to keep, with what the tool said about it.
        self._too_large: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def before_change(self, run_id: str, path: Path, *, held: bytes | None = None) -> str:
        """Keep what `path` holds now, unless this run already kept it.

        Args:
            run_id: The run about to change the file.
            path: The file, absolute and below the root (from `Workspace.resolve_write`).
            held: What the file holds, when that is not the disk's to say: the editor's text
                when the change goes through its buffer (a rewind writes it to the disk).

        Returns:
            "" when the file is kept (or was absent, or already kept in this run); otherwise
            a note for the tool's result saying that a rewind will not restore it.

        Raises:
            PathRefused: `path` is outside the root, or is a symlink or not a regular file.
            OSError: The file exists but cannot be read.
        """
        rel = self._relative(path)
        with self._lock:
            if (run_id, rel) in self._too_large:
                return self._too_large[run_id, rel]
            if (run_id, rel) in self._seen:
                return ""
            if rel not in self.store.snapshots(self.session_id, run_id):
                try:
                    data = self._read(path) if held is None else self._held(held)
                except (FileNotFoundError, NotADirectoryError):
                    digest = None
                    for made in self._missing_directories(path):
                        self.store.record_snapshot(self.session_id, run_id, made, None)
                except _TooLarge as exc:
                    note = (
                        f"{rel} was not kept for a rewind ({exc.size:,} bytes, more than"
                        f" snapshotMaxBytes, {self.max_bytes:,}): rewinding will not restore it"
                    )
                    self._too_large[run_id, rel] = note
                    return note
                else:
                    digest = self.store.put_blob(data)
                self.store.record_snapshot(self.session_id, run_id, rel, digest)
            self._seen.add((run_id, rel))
            return ""

    def _missing_directories(self, path: Path) -> list[str]:
        """The directories above `path`, below the root, that do not exist yet (the tool will
        make them), each as `rel/`: a rewind removes them again if they are empty then."""
        missing = []
        for parent in path.parents:
            if parent == self.root or os.path.lexists(parent):
                break
            missing.append(self._relative(parent) + "/")
        return missing

    def _held(self, held: bytes) -> bytes:
        if len(held) > self.max_bytes:
            raise _TooLarge(len(held))
        return held

    def _read(self, path: Path) -> bytes:
        """The file's bytes, opened as `read_file_bytes` does; the size is checked first.

        Raises:
            _TooLarge: Over `max_bytes`; nothing was read.
        """
        with os.fdopen(open_read(self.root, path), "rb") as file:
            st = os.fstat(file.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            if not stat.S_ISREG(st.st_mode):
                raise PathRefused("not-a-file", str(path), "not a regular file")
            if st.st_size > self.max_bytes:
                raise _TooLarge(st.st_size)
            data = file.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:  # it grew since the fstat
            raise _TooLarge(len(data))
        return data

    def changed(self, run_id: str) -> dict[str, str | None]:
        """The files `run_id` changed, workspace-relative, each with its earlier blob's digest
        (the directories made for them left out)."""
        kept = self.store.snapshots(self.session_id, run_id)
        return {rel: digest for rel, digest in kept.items() if not rel.endswith("/")}

    def restore(self, run_id: str) -> list[Path]:
        """Put every file the run changed back as it was before the run.

        A file that existed gets its old bytes back exactly (an existing file keeps its
        mode); a file the run created is removed, and so is each directory made for it
        (recorded as `rel/`) that is empty then; one holding something else stays.

        Args:
            run_id: The run to undo.

        Returns:
            The absolute paths restored or removed, sorted.

        Raises:
            RestoreError: Some files could not be restored (its `restored` lists the others).
        """
        restored: list[Path] = []
        failures: list[RestoreFailure] = []
        kept = self.store.snapshots(self.session_id, run_id)
        for rel, digest in sorted(self.changed(run_id).items()):
            target = self.root.joinpath(*PurePosixPath(rel).parts)
            try:
                if digest is None:
                    self._remove(target)
                else:
                    atomic_write(self.root, target, self.store.get_blob(digest))
            except (OSError, PathRefused, KeyError) as exc:
                failures.append(RestoreFailure(rel, _reason(exc)))
            else:
                restored.append(target)
        made = [rel for rel in kept if rel.endswith("/")]  # once the files are back
        for rel in sorted(made, key=lambda r: r.count("/"), reverse=True):  # deepest first
            self._remove_if_empty(self.root.joinpath(*PurePosixPath(rel).parts))
        if failures:
            raise RestoreError(restored, failures)
        return restored

    def restore_runs(self, runs: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Put back what each of `runs` changed, in the order given (newest first, so that a
        file several runs changed ends as the earliest of them found it); a failure leaves the
        other files restored (`moot.core.options.Snapshots`, for `RestoreFiles`).

        Returns:
            The workspace-relative paths written back or removed, sorted; and `path: reason`
            for each file that could not be put back.
        """
        restored: set[str] = set()
        failures: list[str] = []
        for run in runs:
            try:
                paths = self.restore(run)
            except RestoreError as exc:
                paths = exc.restored
                failures += [f"{f.path}: {f.reason}" for f in exc.failures]
            restored.update(p.relative_to(self.root).as_posix() for p in paths)
        return tuple(sorted(restored)), tuple(failures)

    def _relative(self, path: Path) -> str:
        if not path.is_absolute() or not path.is_relative_to(self.root) or path == self.root:
            raise PathRefused("outside-workspace", str(path), f"not below {self.root}")
        return path.relative_to(self.root).as_posix()

    def _remove(self, target: Path) -> None:
        """Remove a file (or a symlink) the run created; a directory there is refused."""
        parts = target.relative_to(self.root).parts
        try:
            dir_fd = open_dir_chain(self.root, parts[:-1])
        except (FileNotFoundError, NotADirectoryError):
            return  # its directory is gone, so the file is too
        try:
            try:
                st = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "a directory stands there now", str(target))
            os.unlink(parts[-1], dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    def _remove_if_empty(self, target: Path) -> None:
        """Remove a directory a run made, if nothing is in it now (nothing is lost)."""
        parts = target.relative_to(self.root).parts
        try:
            dir_fd = open_dir_chain(self.root, parts[:-1])
        except (FileNotFoundError, NotADirectoryError):
            return
        try:
            os.rmdir(parts[-1], dir_fd=dir_fd)
        except OSError:
            pass  # gone already, not empty, or not a directory now: it stays as it is
        finally:
            os.close(dir_fd)


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"the store has no blob {exc.args[0]}"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
