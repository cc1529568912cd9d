"""What a look of the repository index leaves for the next session: which files of the listing
were its sources, a digest of their stats, and the content key and notes it answered.

A new session's first look would read every cached row (60,000 on a big repository), check
each file against its row and ask the cache which contents it holds tags for: ~0.5 s before
it can answer with the map an earlier session saved. A saved look lets it skip all of that:
the look is stored under a digest of the listing (every path, the listing's notes, moot's
version), and holds the positions in that listing of the source files and their languages,
a digest of those files' stats (type, inode, device, modification and change times, size,
and which of them a `Read(...)` deny rule hides under another name) and what the look found:
its content key (`moot.repomap.sources.content_key`) and notes. A new session whose listing
has that digest stats the same files; when every stat is as saved, what the files hold is
what that look found, so the content key names the saved map. Any change (a file edited,
touched, added, removed, renamed, a deny rule hiding or showing one) changes one digest or
the other, and the look is made in full. The rows and facts are read when first needed.
"""

from __future__ import annotations

import hashlib
import operator
import os
from array import array
from collections.abc import Callable, ItemsView, Iterator, KeysView, Mapping, Sequence, ValuesView
from typing import NamedTuple, TypeVar

import msgspec

from moot._version import __version__
from moot.repomap.cache import SCHEMA_VERSION
from moot.repomap.languages import LANGUAGES, LanguageSpec
from moot.repomap.sources import LazyFacts, SourceIndex
from moot.workspace.file_listing import FileListing
from moot.workspace.ignore import HiddenInodes

_Value = TypeVar("_Value")
_STAT = operator.attrgetter("st_mode", "st_ino", "st_dev", "st_mtime_ns", "st_ctime_ns", "st_size")
"""What a change to a file changes in its stat (`lstat`)."""
_LANGUAGE = {spec.name: number for number, spec in enumerate(LANGUAGES)}
LOOK_VERSION = 1
"""Bump when which listed files are sources (`mapped_sources`), or what a look says of them,
changes: looks saved by another version are then not used."""


class SavedLook(msgspec.Struct, array_like=True, frozen=True):
    """A look as stored for later sessions (see the module docstring)."""

    positions: bytes
    """The source files' indexes in the listing (`array('I')`)."""
    languages: bytes
    """Each source file's language, as its index in `LANGUAGES`."""
    stats: bytes
    """`stats_digest` of the source files' stats."""
    key: bytes
    """The content key of what the look found."""
    notes: tuple[str, ...]
    """What the look said it left out."""


_DECODER = msgspec.msgpack.Decoder(SavedLook)


def listing_key(listing: FileListing) -> bytes:
    """What a look is saved under: a digest of every listed path, the listing's notes and the
    code that reads the files."""
    code = f"{__version__}\0{SCHEMA_VERSION}\0{LOOK_VERSION}\0"
    digest = hashlib.blake2b(code.encode(), digest_size=16)
    digest.update("\0".join(listing.files).encode("utf-8", "surrogateescape"))
    digest.update("\0\0".join(("", *listing.notes)).encode("utf-8", "surrogateescape"))
    return digest.digest()


def covered(stats: Sequence[os.stat_result], inodes: HiddenInodes | None) -> list[int]:
    """The positions of the files that are another name of one a deny rule hides."""
    if inodes is None:
        return []
    return [n for n, info in enumerate(stats) if info.st_nlink > 1 and inodes.covers(info)]


def stats_digest(stats: Sequence[os.stat_result], hidden: Sequence[int]) -> bytes | None:
    """A digest of the files' stats and of which of them are hidden (`covered`); None when a
    stat does not fit the encoding."""
    try:
        encoded = msgspec.msgpack.encode([list(map(_STAT, stats)), hidden])
    except (OverflowError, msgspec.EncodeError):
        return None
    return hashlib.blake2b(encoded, digest_size=16).digest()


def save(
    listing: FileListing,
    sources: Sequence[tuple[str, LanguageSpec]],
    stats: bytes,
    key: bytes,
    notes: tuple[str, ...],
) -> bytes | None:
    """The stored form of a look whose `sources` (in listing order) stat as `stats` says;
    None when they are not the listing's."""
    positions = array("I")
    files = listing.files
    at = 0
    try:
        for rel, _ in sources:  # both sorted alike: the sources are some of the files
            while files[at] != rel:
                at += 1
            positions.append(at)
    except IndexError:
        return None
    languages = bytes(_LANGUAGE[spec.name] for _, spec in sources)
    return msgspec.msgpack.encode(SavedLook(positions.tobytes(), languages, stats, key, notes))


def load(
    blob: bytes | None, listing: FileListing
) -> tuple[SavedLook, list[tuple[str, LanguageSpec]]] | None:
    """A saved look and its source files in `listing` (the one it was saved for); None when
    there is none or it cannot be read."""
    if blob is None:
        return None
    try:
        saved = _DECODER.decode(blob)
        positions = array("I")
        positions.frombytes(saved.positions)
        if len(positions) != len(saved.languages):
            return None
        paths = _picked(listing.files, positions)
        sources = list(zip(paths, map(LANGUAGES.__getitem__, saved.languages), strict=True))
    except (msgspec.DecodeError, ValueError, IndexError):
        return None
    return saved, sources


def _picked(files: Sequence[str], positions: Sequence[int]) -> Sequence[str]:
    """`files` at `positions`, in one C call for a look of 60,000 files (`itemgetter` of one
    position gives the item itself, not a tuple)."""
    if len(positions) < 2:
        return [files[at] for at in positions]
    return operator.itemgetter(*positions)(files)


class DeferredFacts(Mapping[str, _Value]):
    """A look's facts, worked out when first asked for (a new session answered from a saved
    map and a saved look needs none)."""

    def __init__(self, make: Callable[[], Mapping[str, _Value]]) -> None:
        self._make = make
        self._made: Mapping[str, _Value] | None = None

    def _facts(self) -> Mapping[str, _Value]:
        if self._made is None:
            self._made = self._make()
        return self._made

    def __getitem__(self, rel: str) -> _Value:
        return self._facts()[rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._facts()

    def __iter__(self) -> Iterator[str]:
        return iter(self._facts())

    def __len__(self) -> int:
        return len(self._facts())

    def keys(self) -> KeysView[str]:
        return self._facts().keys()

    def values(self) -> ValuesView[_Value]:
        return self._facts().values()

    def items(self) -> ItemsView[str, _Value]:
        return self._facts().items()


class Stamp(NamedTuple):
    """A look that left nothing to parse: its listing, sources, their stats' digest, files."""

    listing: FileListing
    sources: list[tuple[str, LanguageSpec]]
    digest: bytes
    current: set[str]
    exact: bool
    """Every file's content was taken at the stat the digest has: the look may be saved."""


class DeferredLook:
    """A look answered from a saved look: the rows and facts are read when first needed."""

    def __init__(
        self,
        sources: list[tuple[str, LanguageSpec]],
        stamp: tuple[FileListing, bytes, list[os.stat_result], bytes, list[int]],
        saved: SavedLook,
    ) -> None:
        """Args:
        sources: The listing's source files, with their language.
        stamp: The listing, its `listing_key`, the sources' stats (kept until the look is
            made in full: no more than a look in full holds), their `stats_digest`, and the
            positions of those `covered`.
        saved: The saved look they matched.
        """
        self.sources = sources
        self.listing, self.listing_key, self.stats, self.digest, self.hidden = stamp
        self.saved = saved
        self.found: SourceIndex | None = None
        self.facts: LazyFacts | None = None
        """Set when the look is made in full (`RepoIndex._make_deferred`)."""


class CoveredInodes:
    """Which files a deferred look found hidden under another name (`HiddenInodes`)."""

    def __init__(self, inodes: set[tuple[int, int]]) -> None:
        self._inodes = inodes

    def covers(self, info: os.stat_result) -> bool:
        return (info.st_dev, info.st_ino) in self._inodes
