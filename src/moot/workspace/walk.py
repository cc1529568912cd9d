"""Walking the workspace as the search tools see it: ignore files honoured (see
`moot.workspace.ignore`), `.git` skipped.

Entries come in path order: each directory's entries sorted by name, a directory's contents
right after it, which is the order of sorting paths by their components (and ripgrep's
`--sort path`). Symlinks are listed but never followed, so a walk cannot leave the workspace:
each directory is opened from its parent's descriptor with `O_NOFOLLOW`, so one swapped for
a symlink while the walk runs is not entered either.

A walk is bounded, because a hostile repository can hold a directory thousands of levels deep
(a recursive walk died of `RecursionError` at 1,000, and at 3,000 one turn took ~40 s): it is
iterative, never enters a directory more than `MAX_DEPTH` levels below the workspace root, and
stops once `WALK_SECONDS` have passed. `Walk.stopped` then says what was left out, for the
tool to tell the model.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from moot.workspace.ignore import GitIgnore
from moot.workspace.no_follow import PathRefused, open_dir_chain

SKIPPED_NAMES = frozenset({".git"})
"""Never listed or searched, at any depth."""
MAX_DEPTH = 64
"""Entries at most this many levels below the workspace root are found; directories at this
depth are listed but not entered. Real projects stay far shallower."""
WALK_SECONDS = 20.0
"""How long one walk (or search) may take before it stops with what it found: a backstop
for trees no one could read in a turn, well above the Python grep's ~3-9 s over 50,000 files
on a busy 2-core machine."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CLOCK_EVERY = 64
"""Entries between two looks at the clock."""


class Entry(msgspec.Struct, frozen=True):
    """One file, directory or symlink found by a walk."""

    parts: tuple[str, ...]
    """Path components below the workspace root."""
    depth: int
    """1 for the entries of the start directory, 2 below them, and so on."""
    mode: int
    """`st_mode` of the entry itself (symlinks not followed)."""
    mtime_ns: int

    @property
    def rel(self) -> str:
        """Path below the root, joined with `/`."""
        return "/".join(self.parts)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def is_file(self) -> bool:
        """A regular file (not a symlink, FIFO or device)."""
        return stat.S_ISREG(self.mode)

    @property
    def is_link(self) -> bool:
        return stat.S_ISLNK(self.mode)


def path_order(rel: str) -> tuple[str, ...]:
    """Sort key giving walk order for paths joined with `/`."""
    return tuple(rel.split("/"))


def below(start: str, rel: str) -> str:
    """`rel` relative to the searched path `start` (both relative to the root, `/`-joined).

    When `start` is the file itself, its name: globs then match the file by name.
    """
    if start == ".":
        return rel
    if rel == start:
        return rel.rsplit("/", 1)[-1]
    return rel[len(start) + 1 :]


def deadline_after(seconds: float = WALK_SECONDS) -> float:
    """The `time.monotonic()` value a walk starting now must stop at."""
    return time.monotonic() + seconds


def too_deep(rel: str) -> str:
    """What a result says when it left out directories below `MAX_DEPTH` (first: `rel`)."""
    return f"directories more than {MAX_DEPTH} levels deep were not entered (first: {rel})"


def out_of_time() -> str:
    """What a result says when its walk stopped for time."""
    return f"stopped at the time limit ({WALK_SECONDS:g} s), so this is incomplete; narrow the path"


class Walk:
    """Every entry below `start` that is not ignored, in path order; see the module docstring.

    Iterate it once; afterwards `stopped` is "" or what was left out and why.
    """

    def __init__(
        self,
        root: Path,
        start: Path,
        ignore: GitIgnore,
        *,
        max_depth: int | None = None,
        deadline: float | None = None,
    ) -> None:
        """Args:
        root: The workspace root; ignore files from here down apply.
        start: A directory inside `root`, free of symlinks; it is not itself checked against
            ignore rules (the caller asked for it).
        ignore: The rules, one instance per walk.
        max_depth: List entries at most this deep below `start` (1: only its own entries);
            reaching it is what the caller asked for, not an early stop.
        deadline: A `time.monotonic()` value to stop at; `WALK_SECONDS` from the first
            entry when None.
        """
        self.root, self.start, self.ignore = root, start, ignore
        self.max_depth = max_depth
        self.deadline = deadline
        self.stopped = ""
        """Why the walk left something out ("" when it did not): too deep, or out of time."""

    def __iter__(self) -> Iterator[Entry]:
        deadline = deadline_after() if self.deadline is None else self.deadline
        base = self.start.relative_to(self.root).parts
        try:
            fd = open_dir_chain(self.root, base)
        except (OSError, PathRefused):
            return  # unreadable, gone, or a symlink now: nothing to list
        # One frame per open directory: its descriptor, path parts, depth and entries left.
        stack: list[tuple[int, tuple[str, ...], int, Iterator[os.DirEntry[str]]]] = []
        try:
            self._push(stack, fd, base, 1)
            seen = 0
            while stack:
                dir_fd, parts, depth, entries = stack[-1]
                item = next(entries, None)
                if item is None:
                    os.close(stack.pop()[0])
                    continue
                seen += 1
                if seen % _CLOCK_EVERY == 0 and time.monotonic() > deadline:
                    self.stopped = out_of_time()
                    return
                entry = self._entry(item, parts, depth)
                if entry is None:
                    continue
                yield entry
                if not entry.is_dir or (self.max_depth is not None and depth >= self.max_depth):
                    continue
                if len(entry.parts) >= MAX_DEPTH:
                    self.stopped = self.stopped or too_deep(entry.rel)
                    continue
                try:
                    child = os.open(item.name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError:
                    continue  # unreadable, or swapped for a symlink since it was listed
                self._push(stack, child, entry.parts, depth + 1)
        finally:
            for frame in stack:
                os.close(frame[0])

    @staticmethod
    def _push(
        stack: list[tuple[int, tuple[str, ...], int, Iterator[os.DirEntry[str]]]],
        fd: int,
        parts: tuple[str, ...],
        depth: int,
    ) -> None:
        """List the directory open as `fd` (taking it over) onto the stack, sorted by name."""
        try:
            with os.scandir(fd) as scan:
                found = sorted(scan, key=lambda item: item.name)
        except OSError:
            os.close(fd)
            return  # unlistable: skipped, as ripgrep does
        stack.append((fd, parts, depth, iter(found)))

    def _entry(self, item: os.DirEntry[str], parts: tuple[str, ...], depth: int) -> Entry | None:
        if item.name in SKIPPED_NAMES:
            return None
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            return None
        entry = Entry((*parts, item.name), depth, st.st_mode, st.st_mtime_ns)
        return None if self.ignore.ignored(entry.parts, entry.is_dir) else entry


def walk(
    root: Path,
    start: Path,
    ignore: GitIgnore,
    *,
    max_depth: int | None = None,
    deadline: float | None = None,
) -> Walk:
    """Every entry below `start` that is not ignored, in path order (see `Walk`).

    Unreadable directories are skipped; read `stopped` on the result after iterating.
    """
    return Walk(root, start, ignore, max_depth=max_depth, deadline=deadline)


class FileWalk:
    """The regular files `walk` finds below a directory, or `start` itself when it is a file.

    An explicitly named file is kept even if ignored, as in ripgrep. `stopped` as in `Walk`.
    """

    def __init__(
        self, root: Path, start: Path, ignore: GitIgnore, *, deadline: float | None = None
    ) -> None:
        self.root, self.start, self.ignore, self.deadline = root, start, ignore, deadline
        self._walk: Walk | None = None

    @property
    def stopped(self) -> str:
        """Why the walk left something out, or ""."""
        return self._walk.stopped if self._walk is not None else ""

    def __iter__(self) -> Iterator[Entry]:
        try:
            st = os.stat(self.start, follow_symlinks=False)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):
            yield Entry(self.start.relative_to(self.root).parts, 0, st.st_mode, st.st_mtime_ns)
            return
        self._walk = Walk(self.root, self.start, self.ignore, deadline=self.deadline)
        for entry in self._walk:
            if entry.is_file:
                yield entry


def walk_files(
    root: Path, start: Path, ignore: GitIgnore, *, deadline: float | None = None
) -> FileWalk:
    """The regular files below `start`, or `start` itself when it is a file (see `FileWalk`)."""
    return FileWalk(root, start, ignore, deadline=deadline)
