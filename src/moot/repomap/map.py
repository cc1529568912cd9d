"""Building the repository map of a workspace: index, rank, render."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from moot._version import __version__
from moot.repomap.focus import resolve_focus
from moot.repomap.index import RepoIndex
from moot.repomap.rank import rank_files
from moot.repomap.render import render_map
from moot.repomap.sources import SourceIndex
from moot.workspace.ignore import Hidden, HiddenInodes

RANKING_VERSION = 1
"""Bump when ranking or rendering changes what a map of the same files shows: maps saved by
an earlier version are then not used."""
_SAVED = msgspec.msgpack.Decoder(tuple[str, tuple[str, ...], int])
_KEPT_MAPS = 8
"""Rendered maps a session's index keeps (by focus and budget) for a look that changed nothing."""


class RepoMap(msgspec.Struct, frozen=True):
    """A rendered map and how it was made."""

    text: str
    """The map; its estimated tokens (characters / 4) are within the budget. Empty when no
    source file was found or not even one fits."""
    ranked: tuple[str, ...]
    """Every mapped file, most important first."""
    shown: int
    """How many of them the text shows."""
    parsed: tuple[str, ...]
    """Files this build parsed; the rest came from the cache."""
    notes: tuple[str, ...] = ()
    """What was left out and why (a grammar that is not installed, files not parsed yet)."""


def index_workspace(
    root: Path,
    cache_file: Path | None = None,
    hidden: Hidden | None = None,
    inodes: HiddenInodes | None = None,
) -> SourceIndex:
    """The tags of every source file below `root`, from the cache where files are unchanged:
    one look of a `RepoIndex` made for it (what is not parsed in its time is left to the next).

    Args:
        root: The workspace root, free of symlinks.
        cache_file: The cache database; None for this workspace's file in `cache_dir()`.
        hidden: Paths no walk may show (`Read(...)` deny rules): neither indexed nor mapped.
        inodes: What those rules hide under another name (a hard link): likewise.
    """
    with RepoIndex(root, cache_file=cache_file, background=False) as index:
        found = index.index(hidden, inodes)
        # read before it closes
        return msgspec.structs.replace(found, facts=dict(found.facts), files=dict(found.files))


def build_repo_map(
    root: Path,
    *,
    focus: Sequence[str] = (),
    tokens: int = 1024,
    cache_file: Path | None = None,
    hidden: Hidden | None = None,
    inodes: HiddenInodes | None = None,
) -> RepoMap:
    """Map the workspace's source files: the most referenced first, with their declarations.

    Args:
        root: The workspace root, free of symlinks.
        focus: Paths or names from the conversation (`src/app/cli.py`, `cli.py`, `cli`,
            `Config`): matching files, and files defining matching names, rank higher.
        tokens: The budget for the text, estimated as characters / 4.
        cache_file: The cache database; None for this workspace's file in `cache_dir()`.
        hidden: Paths no walk may show (`Read(...)` deny rules): never mapped.
        inodes: What those rules hide under another name (a hard link): never mapped.
    """
    with RepoIndex(root, cache_file=cache_file, background=False) as index:
        return map_repository(index, focus=focus, tokens=tokens, hidden=hidden, inodes=inodes)


def map_repository(
    index: RepoIndex,
    *,
    focus: Sequence[str] = (),
    tokens: int = 1024,
    hidden: Hidden | None = None,
    inodes: HiddenInodes | None = None,
) -> RepoMap:
    """`build_repo_map` over an index kept for a session: a look that changed nothing since
    the same map was asked for answers with that map again, without ranking."""
    found = index.index(hidden, inodes, focus=focus)
    key = ("map", found.version, tuple(focus), tokens, found.notes)
    kept = index.results.get(key)
    if isinstance(kept, RepoMap):
        return msgspec.structs.replace(kept, parsed=found.parsed)
    saved_key = _saved_key(index, found, tokens) if not focus else None
    result = _saved(index, saved_key, found)
    if result is None:
        focus_files, focus_names = resolve_focus(index.root, found.facts, focus)
        ranking = rank_files(found.facts, focus_files, focus_names, start=_last_ranks(index))
        text, shown = render_map(found.files, ranking, tokens)
        index.results["ranks"] = ranking.files
        result = RepoMap(text, tuple(ranking.files), shown, found.parsed, found.notes)
        if saved_key is not None and not found.pending:
            index.saved_map(saved_key, msgspec.msgpack.encode((text, result.ranked, shown)))
    if len(index.results) >= _KEPT_MAPS:
        index.results = {"ranks": index.results.get("ranks")}
    index.results[key] = result
    return result


def _saved_key(index: RepoIndex, found: SourceIndex, tokens: int) -> bytes:
    """What an unfocused map of `found` is saved under: its files' content, the budget and
    the code that ranks and renders."""
    return b"%s:%d:%d:%s" % (
        index.content_key(found),
        tokens,
        RANKING_VERSION,
        __version__.encode(),
    )


def _saved(index: RepoIndex, key: bytes | None, found: SourceIndex) -> RepoMap | None:
    """The map an earlier session saved under `key`, made of the same files (None: none)."""
    blob = index.saved_map(key) if key is not None else None
    if blob is None:
        return None
    try:
        text, ranked, shown = _SAVED.decode(blob)
    except msgspec.DecodeError:
        return None
    return RepoMap(text, ranked, shown, found.parsed, found.notes)


def _last_ranks(index: RepoIndex) -> dict[str, float] | None:
    """The ranks of the index's last map: ranking starts there and needs fewer rounds."""
    ranks = index.results.get("ranks")
    return ranks if isinstance(ranks, dict) else None
