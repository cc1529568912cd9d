"""What the file index answers (`moot.workspace.file_index`): one look's files, made from what
the index holds with what `Read(...)` deny rules hide taken out."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterable, Sequence

import msgspec

from moot.workspace.ignore import Hidden
from moot.workspace.walk import path_order, too_deep


class FileListing(msgspec.Struct, frozen=True):
    """The workspace's files at one look; never changes (the next look makes another)."""

    files: tuple[str, ...]
    """Every file, relative to the root and `/`-joined, sorted (by code point: a directory's
    files and subdirectories sit together, though `a-b` comes before `a/b`)."""
    directories: frozenset[str]
    """The directories the index entered ("" for the root): a glob from one of them reads the
    index; from any other (ignored, too deep) it walks."""
    notes: tuple[str, ...] = ()
    """What the listing left out and why; empty when it lists every file."""
    version: int = 0
    """Differs between two listings of one index whenever their files may differ."""

    def under(self, directory: str) -> Sequence[str]:
        """The files below `directory` ("" or "." for all), sorted."""
        if directory in ("", "."):
            return self.files
        low = directory + "/"
        high = directory + "0"  # `0` follows `/`: every path that starts with `low` sorts first
        start = bisect.bisect_left(self.files, low)
        return self.files[start : bisect.bisect_left(self.files, high, start)]


def make_listing(
    files: Sequence[str],
    directories: Iterable[str],
    too_deep_dirs: Collection[str],
    stopped: str,
    version: int,
    hidden: Hidden | None,
) -> FileListing:
    """The listing of what an index holds, without what `hidden` hides (a hidden directory
    takes everything below it with it, and the notes naming what lies below one).

    Args:
        files: Every file the index holds, sorted.
        directories: The directories it entered.
        too_deep_dirs: Directories found too deep to enter.
        stopped: Why its last build stopped early ("" when it did not).
        version: The index's count of changes.
        hidden: What `Read(...)` deny rules hide (`Workspace.hidden`).
    """
    shut = _hidden_directories(directories, hidden)
    if shut:
        assert hidden is not None
        kept = tuple(
            rel for rel in files if rel.rpartition("/")[0] not in shut and not hidden(rel, False)
        )
    elif hidden is not None:
        kept = tuple(rel for rel in files if not hidden(rel, False))
    else:
        kept = tuple(files)
    notes: list[str] = []
    deep = [d for d in too_deep_dirs if not _below_any(d, shut, hidden)]
    if deep:
        notes.append(too_deep(min(deep, key=path_order)))
    if stopped:
        notes.append(stopped)
    entered = frozenset(d for d in directories if d not in shut)
    return FileListing(kept, entered, tuple(notes), version)


def _hidden_directories(directories: Iterable[str], hidden: Hidden | None) -> set[str]:
    """The directories held that are hidden, themselves or by one above them."""
    shut: set[str] = set()
    if hidden is None:
        return shut
    for rel in sorted(directories):  # parents first
        if rel and (rel.rpartition("/")[0] in shut or hidden(rel, True)):
            shut.add(rel)
    return shut


def _below_any(rel: str, shut: set[str], hidden: Hidden | None) -> bool:
    """Whether the directory `rel` (whose parent the index holds) is hidden, itself or by a
    directory above it."""
    return hidden is not None and (rel.rpartition("/")[0] in shut or hidden(rel, True))
