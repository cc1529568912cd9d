"""What a look of the repository index answers (`moot.repomap.index`): which files are
source files, their facts and tags, and the notes on what was left out."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from moot.repomap.languages import SKIPPED_SUFFIXES, LanguageSpec, language_for
from moot.repomap.parse import MAX_FILE_BYTES
from moot.repomap.rank import RankFacts
from moot.repomap.tags import FileTags

_Source = TypeVar("_Source", bound=tuple[str, Any])
PARSE_SECONDS = 2.0
"""How long one look parses at most; the rest is parsed in the background (a session's
index) or by the next look. Parsing runs at ~0.5 ms a file on a core: ~10,000 files fit."""
PRUNED_DIRECTORIES = frozenset({"node_modules", "__pycache__", "site-packages"})
"""Directories never mapped (nor any whose name starts with a dot), ignored or not."""


_UNKNOWN = LanguageSpec("", (), "", "", (), ())
"""A path ending `mapped_sources` has not looked up yet."""
PENDING = RankFacts("", (), (), (), ())
"""The facts of a file taken from the cache and not decoded yet (`LazyFacts`)."""


class LazyFacts(Mapping[str, RankFacts]):
    """A look's facts, by path: those taken from the cache are decoded at the first value
    asked for (a new session whose map was saved ranks nothing and needs none)."""

    def __init__(
        self, facts: dict[str, RankFacts], settle: Callable[[], Mapping[str, RankFacts]]
    ) -> None:
        self._facts = facts
        self._settle: Callable[[], Mapping[str, RankFacts]] | None = settle

    def __getitem__(self, rel: str) -> RankFacts:
        facts = self._facts[rel]
        if facts is PENDING and self._settle is not None:
            decoded, self._settle = self._settle(), None
            self._facts = {
                path: decoded[path] if known is PENDING else known
                for path, known in self._facts.items()
            }
            facts = self._facts[rel]
        return facts

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)


class SourceIndex(msgspec.Struct, frozen=True):
    """The source files of a workspace and what they define, at one look."""

    facts: Mapping[str, RankFacts]
    """Workspace-relative path (`/`-separated) to what ranking reads of it, for every file
    that is mapped (`LazyFacts`)."""
    files: Mapping[str, FileTags]
    """The same files' full tags, read from the cache as they are asked for."""
    parsed: tuple[str, ...]
    """Files parsed by this look, because the cache had no current row for them."""
    notes: tuple[str, ...] = ()
    """What was left out and why (a grammar not installed, files not parsed yet)."""
    version: int = 0
    """Differs between two looks of one index whenever `facts` may differ."""
    pending: int = 0
    """Source files not parsed yet (the look's time ran out)."""


class _Content(Protocol):
    @property
    def language(self) -> str: ...
    @property
    def digest(self) -> bytes: ...


def content_key(found: SourceIndex, contents: Mapping[str, _Content]) -> bytes:
    """A digest of what a map of `found` is made from: every mapped file's path, language and
    content (`contents`: by path), and the notes. Equal keys, equal maps."""
    parts: list[bytes] = []
    for rel in sorted(found.facts):
        content = contents[rel]
        parts += (rel.encode(), b"\0", content.language.encode(), b"\0", content.digest)
    parts += (note.encode() + b"\0" for note in found.notes)
    return hashlib.blake2b(b"".join(parts), digest_size=16).digest()


def mapped_sources(files: Sequence[str]) -> list[tuple[str, LanguageSpec]]:
    """The files the map reads, with their language: those in the map's languages, minus
    anything below a hidden directory or one of `PRUNED_DIRECTORIES`."""
    pruned: dict[str, bool] = {}
    languages: dict[str, LanguageSpec | None] = {}
    """By what follows a path's last dot: most of 100,000 paths share a few endings."""
    found: list[tuple[str, LanguageSpec]] = []
    for rel in files:
        dot = rel.rfind(".")
        ending = rel[dot:] if dot >= 0 else ""
        spec = languages.get(ending, _UNKNOWN)
        if spec is _UNKNOWN:
            spec = languages[ending] = None if "/" in ending else language_for(f"x{ending}")
        if spec is None:
            continue
        slash = rel.rfind("/")
        if dot == slash + 1 or rel.endswith(SKIPPED_SUFFIXES):
            continue  # a name that starts with its dot; built or minified output
        if slash > 0:
            directory = rel[:slash]
            skip = pruned.get(directory)
            if skip is None:
                skip = pruned[directory] = any(
                    part.startswith(".") or part in PRUNED_DIRECTORIES
                    for part in directory.split("/")
                )
            if skip:
                continue
        found.append((rel, spec))
    return found


def look_notes(
    problems: Sequence[str],
    unmapped: Iterable[tuple[str, int]],
    listed: Sequence[str],
    pending: tuple[int, int, bool],
) -> tuple[str, ...]:
    """What a look says it left out.

    Args:
        problems: Why each file not parsed for a reason to tell was not (a grammar missing).
        unmapped: The files read but not mapped, with their size (`left_out_notes`).
        listed: What the file listing left out (`FileListing.notes`).
        pending: How many source files are not parsed yet, of how many, and whether they
            are being parsed in the background.
    """
    counts: dict[str, int] = {}
    for problem in problems:
        counts[problem] = counts.get(problem, 0) + 1
    notes = [f"{count} file(s) left out: {why}" for why, count in counts.items()]
    notes += left_out_notes(unmapped)
    notes += listed
    left, current, background = pending
    if left:
        later = (
            "they are being parsed in the background: map again for the rest"
            if background
            else "map again to parse more"
        )
        notes.append(
            f"{left:,} of {current:,} source files are not parsed yet (a look parses"
            f" for {PARSE_SECONDS:g} s); {later}"
        )
    return tuple(notes)


def stat_all(root_fd: int, sources: Sequence[tuple[str, Any]]) -> list[os.stat_result] | None:
    """Every source file's `lstat` (None: one could not be statted; stat them one by one)."""
    look = os.stat
    try:
        return [look(rel, dir_fd=root_fd, follow_symlinks=False) for rel, _ in sources]
    except OSError:
        return None


def stamp_of(stats: list[os.stat_result]) -> int:
    """A digest of what a change to a file changes in its stat: its type, inode, device,
    modification and change times, and size."""
    return hash(
        tuple(
            [
                (s.st_mode, s.st_ino, s.st_dev, s.st_mtime_ns, s.st_ctime_ns, s.st_size)
                for s in stats
            ]
        )
    )


def stat_each(
    root_fd: int, sources: Sequence[_Source], stats: list[os.stat_result] | None
) -> Iterable[tuple[_Source, os.stat_result]]:
    """Each source file with its stat (`stats`, or statted here when None), those that
    cannot be statted left out."""
    if stats is not None:
        return zip(sources, stats, strict=True)
    return _stat_one_by_one(root_fd, sources)


def _stat_one_by_one(
    root_fd: int, sources: Sequence[_Source]
) -> Iterator[tuple[_Source, os.stat_result]]:
    for source in sources:
        try:
            yield source, os.stat(source[0], dir_fd=root_fd, follow_symlinks=False)
        except OSError:
            continue


def left_out_notes(unmapped: Iterable[tuple[str, int]]) -> list[str]:
    """Notes on the files read but not mapped (`(path, size)`): past the size limit, or
    binary; how many, and a few by name."""
    large: list[str] = []
    binary: list[str] = []
    for rel, size in unmapped:
        (large if size > MAX_FILE_BYTES else binary).append(rel)
    notes: list[str] = []
    if large:
        notes.append(
            f"{len(large):,} file(s) past the {MAX_FILE_BYTES // 1024} KB size limit left"
            f" out: {_some(large)}"
        )
    if binary:
        notes.append(f"{len(binary):,} binary file(s) left out: {_some(binary)}")
    return notes


def _some(paths: list[str], shown: int = 3) -> str:
    """A few of `paths` by name, and how many more."""
    named = ", ".join(sorted(paths)[:shown])
    return named + (f" and {len(paths) - shown:,} more" if len(paths) > shown else "")


class LazyTags(Mapping[str, FileTags]):
    """The full tags of a look's files, read from the index's cache as they are asked for."""

    def __init__(
        self, read: Callable[[str], FileTags | None], facts: Mapping[str, RankFacts]
    ) -> None:
        self._read = read
        self._facts = facts

    def __getitem__(self, rel: str) -> FileTags:
        if rel not in self._facts:
            raise KeyError(rel)
        tags = self._read(rel)
        if tags is None:  # gone from the cache meanwhile: what ranking knew, no declarations
            return FileTags(self._facts[rel].language)
        return tags

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts)

    def __len__(self) -> int:
        return len(self._facts)


def parse_order(item: tuple[str, LanguageSpec, int], first: set[str]) -> tuple[bool, int, int]:
    """Focused files first, then the shallowest, the newest first."""
    rel, _, mtime_ns = item
    return (rel not in first, rel.count("/"), -mtime_ns)
