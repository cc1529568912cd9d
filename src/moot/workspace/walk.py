"""Walking the workspace as the search tools see it: .gitignore honoured, `.git` skipped.

Entries come in path order: each directory's entries sorted by name, a directory's contents
right after it, which is the order of sorting paths by their components (and ripgrep's
`--sort path`). Symlinks are listed but never followed, so a walk cannot leave the workspace.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import msgspec

from moot.workspace.ignore import GitIgnore

SKIPPED_NAMES = frozenset({".git"})
"""Never listed or searched, at any depth."""


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


def walk(
    root: Path,
    start: Path,
    ignore: GitIgnore,
    *,
    max_depth: int | None = None,
) -> Iterator[Entry]:
    """Every entry below `start` that is not ignored, in path order.

    Args:
        root: The workspace root; `.gitignore` files from here down apply.
        start: A directory inside `root`, free of symlinks; it is not itself checked against
            ignore rules (the caller asked for it).
        ignore: The rules, one instance per walk.
        max_depth: List entries at most this deep (1: only `start`'s own entries).

    Yields:
        Entries; directories before their contents. Unreadable directories are skipped.
    """
    base = start.relative_to(root).parts
    yield from _walk(start, base, 1, ignore, max_depth)


def _walk(
    directory: Path,
    parts: tuple[str, ...],
    depth: int,
    ignore: GitIgnore,
    max_depth: int | None,
) -> Iterator[Entry]:
    try:
        with os.scandir(directory) as scan:
            found = sorted(scan, key=lambda item: item.name)
    except OSError:
        return
    for item in found:
        if item.name in SKIPPED_NAMES:
            continue
        try:
            st = item.stat(follow_symlinks=False)
        except OSError:
            continue
        entry = Entry((*parts, item.name), depth, st.st_mode, st.st_mtime_ns)
        if ignore.ignored(entry.parts, entry.is_dir):
            continue
        yield entry
        if entry.is_dir and (max_depth is None or depth < max_depth):
            yield from _walk(Path(item.path), entry.parts, depth + 1, ignore, max_depth)


def walk_files(root: Path, start: Path, ignore: GitIgnore) -> Iterator[Entry]:
    """The regular files `walk` finds below a directory, or `start` itself when it is a file.

    An explicitly named file is kept even if ignored, as in ripgrep.
    """
    try:
        st = os.stat(start, follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        yield Entry(start.relative_to(root).parts, 0, st.st_mode, st.st_mtime_ns)
        return
    for entry in walk(root, start, ignore):
        if entry.is_file:
            yield entry
