"""Building the repository map of a workspace: index, rank, render."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import msgspec

from moot.repomap.cache import TagCache, cache_path
from moot.repomap.index import SourceIndex, index_sources
from moot.repomap.languages import language_for
from moot.repomap.rank import rank_files
from moot.repomap.render import render_map
from moot.workspace.ignore import Hidden, HiddenInodes

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


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
    """Files left out and why (a grammar that is not installed)."""


def index_workspace(
    root: Path,
    cache_file: Path | None = None,
    hidden: Hidden | None = None,
    inodes: HiddenInodes | None = None,
) -> SourceIndex:
    """The tags of every source file below `root`, from the cache where files are unchanged.

    Args:
        root: The workspace root, free of symlinks.
        cache_file: The cache database; None for this workspace's file in `cache_dir()`.
        hidden: Paths no walk may show (`Read(...)` deny rules): neither indexed nor mapped.
        inodes: What those rules hide under another name (a hard link): likewise.
    """
    with TagCache(cache_path(root) if cache_file is None else cache_file) as cache:
        return index_sources(root, cache, hidden, inodes)


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
    index = index_workspace(root, cache_file, hidden, inodes)
    focus_files, focus_names = resolve_focus(root, index.files, focus)
    ranking = rank_files(index.files, focus_files, focus_names)
    text, shown = render_map(index.files, ranking, tokens)
    return RepoMap(text, tuple(ranking.files), shown, index.parsed, index.notes)


def resolve_focus(
    root: Path, paths: Collection[str], focus: Sequence[str]
) -> tuple[set[str], set[str]]:
    """The mapped files and the identifiers that the focus strings name.

    A string names a file when it is the file's path (relative, `./`-prefixed or absolute),
    the end of its path (`app/cli.py`), its file name or its stem (`cli`). Unless it is a
    path or a source file's name, it also names identifiers: itself, or the parts of a dotted
    (`Config.load`) or `::` path.

    Returns:
        The focused paths, and the focused identifiers.
    """
    files: set[str] = set()
    names: set[str] = set()
    for item in focus:
        text = item.strip().replace(os.sep, "/")
        if os.path.isabs(text):
            text = os.path.relpath(text, root).replace(os.sep, "/")
        text = text.removeprefix("./")
        if not text:
            continue
        if text in paths:
            files.add(text)
        elif "/" in text:
            files.update(path for path in paths if path.endswith("/" + text))
        else:
            for path in paths:
                name = path.rpartition("/")[2]
                if name == text or name.partition(".")[0] == text:
                    files.add(path)
        if "/" not in text and language_for(text) is None:  # `core.py` names no identifier `py`
            names.update(part for part in re.split(r"\.|::", text) if _IDENTIFIER.fullmatch(part))
    return files, names
