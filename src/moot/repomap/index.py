"""The tags of every source file in a workspace, from the cache where the file is unchanged.

Files are found as the search tools find them (`.gitignore` honoured, `.git` skipped, symlinks
never followed), minus what is never worth mapping: hidden directories (`.venv`, `.tox`),
`node_modules`, `__pycache__` and `site-packages`. A file is parsed only when its path,
`mtime_ns`, size or language differ from its cached row; binary and very large files are
remembered as such, so a warm build reads no file at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec

from moot.repomap.cache import CachedFile, TagCache
from moot.repomap.languages import GrammarMissing, Grammars, LanguageSpec, language_for
from moot.repomap.tags import FileTags, extract_tags
from moot.workspace.ignore import GitIgnore, Hidden, HiddenInodes
from moot.workspace.no_follow import PathRefused, open_read
from moot.workspace.walk import MAX_DEPTH, deadline_after, too_deep, walk

MAX_FILE_BYTES = 512 * 1024
"""Larger files are left out: generated or bundled code, slow to parse and no help to read."""
MAX_FILES = 20_000
"""At most this many source files are mapped; the walk stops there."""
PRUNED_DIRECTORIES = frozenset({"node_modules", "__pycache__", "site-packages"})
"""Directories never entered (nor any whose name starts with a dot), ignored or not."""
_SKIPPED = "null"
"""The cached tags of a file left out (binary or too large), so it is not read again."""


class SourceIndex(msgspec.Struct, frozen=True):
    """The source files of a workspace and their tags."""

    files: dict[str, FileTags]
    """Workspace-relative path (`/`-separated) to tags, for every file that was mapped."""
    parsed: tuple[str, ...]
    """Files parsed by this build, because the cache had no current row for them."""
    notes: tuple[str, ...] = ()
    """Why files were left out, for the reader (a grammar that is not installed)."""


def index_sources(
    root: Path, cache: TagCache, hidden: Hidden | None = None, inodes: HiddenInodes | None = None
) -> SourceIndex:
    """Find the workspace's source files and their tags, parsing only what the cache lacks.

    Args:
        root: The workspace root, free of symlinks.
        cache: Where unchanged files' tags are read from, and new ones written to.
        hidden: Paths no walk may show (`Read(...)` deny rules); never indexed.
        inodes: What those rules hide under another name (a hard link); never indexed.
    """
    cached = cache.load()
    grammars = Grammars()
    files: dict[str, FileTags] = {}
    parsed: list[str] = []
    stored: list[tuple[str, CachedFile]] = []
    left_out: dict[str, int] = {}
    stopped: list[str] = []
    found = 0
    # Listed first, then parsed: the walk's time limit is for walking, not for parsing.
    for rel, spec, st in list(_source_files(root, hidden, stopped)):
        if inodes is not None and inodes.covers(st):
            continue
        found += 1
        row = cached.pop(rel, None)
        if row is not None and row[:3] == (st.st_mtime_ns, st.st_size, spec.name):
            if row.tags == _SKIPPED:
                continue
            try:
                files[rel] = FileTags.from_json(spec.name, row.tags)
                continue
            except ValueError:
                pass  # a damaged row: parse the file again
        try:
            tags = _parse(root, rel, spec, grammars)
        except GrammarMissing as exc:
            left_out[str(exc)] = left_out.get(str(exc), 0) + 1
            continue
        except OSError:
            continue  # unreadable now; not cached, so it is tried again next time
        if tags is not None:
            parsed.append(rel)
            files[rel] = tags
        json = tags.to_json() if tags else _SKIPPED
        stored.append((rel, CachedFile(st.st_mtime_ns, st.st_size, spec.name, json)))
    # What is left in `cached` was not found; after a walk cut short, maybe not looked for.
    cache.update(stored, forgotten=() if stopped else cached)
    notes = [f"{count} file(s) left out: {why}" for why, count in left_out.items()]
    notes += stopped
    if found >= MAX_FILES:
        notes.append(f"only the first {MAX_FILES} source files are mapped")
    return SourceIndex(files, tuple(parsed), tuple(notes))


def _source_files(
    root: Path, hidden: Hidden | None, stopped: list[str]
) -> Iterator[tuple[str, LanguageSpec, os.stat_result]]:
    """Source files below `root`, directory by directory, with their own (lstat) status.

    Bounded as every walk is (`moot.workspace.walk`): directories deeper than `MAX_DEPTH`
    are not entered, and the search stops at the time limit; `stopped` gets why.
    """
    ignore = GitIgnore(root, hidden)
    pending = [root]
    found = 0
    deadline = deadline_after()
    deep = ""
    while pending:
        directory = pending.pop()
        subdirectories: list[Path] = []
        # One level at a time, so pruned directories are never entered: `walk` itself would
        # descend into `node_modules` only for the entries to be dropped here.
        listing = walk(root, directory, ignore, max_depth=1, deadline=deadline)
        for entry in listing:
            name = entry.parts[-1]
            if entry.is_dir:
                if name.startswith(".") or name in PRUNED_DIRECTORIES:
                    continue
                if len(entry.parts) >= MAX_DEPTH:
                    deep = deep or entry.rel
                    continue
                subdirectories.append(directory / name)
                continue
            spec = language_for(name) if entry.is_file else None
            if spec is None:
                continue
            try:
                st = os.lstat(directory / name)
            except OSError:
                continue
            yield entry.rel, spec, st
            found += 1
            if found >= MAX_FILES:
                return
        if listing.stopped:  # out of time (max_depth=1 never reaches MAX_DEPTH's bound)
            stopped.append(listing.stopped)
            return
        pending.extend(reversed(subdirectories))
    if deep:
        stopped.append(too_deep(deep))


def _parse(root: Path, rel: str, spec: LanguageSpec, grammars: Grammars) -> FileTags | None:
    """The tags of the file at `rel` below `root`; None when it is binary or too large.

    Raises:
        OSError: The file cannot be read, or a symlink was swapped in on its way.
        GrammarMissing: Its language's grammar is not installed.
    """
    # Every component opened with O_NOFOLLOW: a directory swapped for a symlink since the
    # walk listed it (by a command running meanwhile) must not lead outside the workspace.
    try:
        fd = open_read(root, root.joinpath(*rel.split("/")))
    except PathRefused as exc:
        raise OSError(f"{rel}: {exc}") from None
    with os.fdopen(fd, "rb") as file:
        source = file.read(MAX_FILE_BYTES + 1)
    if len(source) > MAX_FILE_BYTES or b"\0" in source[:8192]:
        return None
    return extract_tags(source, grammars.get(spec))
