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
from moot.workspace.ignore import GitIgnore, Hidden
from moot.workspace.walk import walk

MAX_FILE_BYTES = 512 * 1024
"""Larger files are left out: generated or bundled code, slow to parse and no help to read."""
MAX_FILES = 20_000
"""At most this many source files are mapped; the walk stops there."""
PRUNED_DIRECTORIES = frozenset({"node_modules", "__pycache__", "site-packages"})
"""Directories never entered (nor any whose name starts with a dot), ignored or not."""
_SKIPPED = "null"
"""The cached tags of a file left out (binary or too large), so it is not read again."""
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class SourceIndex(msgspec.Struct, frozen=True):
    """The source files of a workspace and their tags."""

    files: dict[str, FileTags]
    """Workspace-relative path (`/`-separated) to tags, for every file that was mapped."""
    parsed: tuple[str, ...]
    """Files parsed by this build, because the cache had no current row for them."""
    notes: tuple[str, ...] = ()
    """Why files were left out, for the reader (a grammar that is not installed)."""


def index_sources(root: Path, cache: TagCache, hidden: Hidden | None = None) -> SourceIndex:
    """Find the workspace's source files and their tags, parsing only what the cache lacks.

    Args:
        root: The workspace root, free of symlinks.
        cache: Where unchanged files' tags are read from, and new ones written to.
        hidden: Paths no walk may show (`Read(...)` deny rules); never indexed.
    """
    cached = cache.load()
    grammars = Grammars()
    files: dict[str, FileTags] = {}
    parsed: list[str] = []
    stored: list[tuple[str, CachedFile]] = []
    left_out: dict[str, int] = {}
    found = 0
    for rel, spec, st in _source_files(root, hidden):
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
            tags = _parse(root / rel, spec, grammars)
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
    cache.update(stored, forgotten=cached)  # what is left in `cached` was not found
    notes = [f"{count} file(s) left out: {why}" for why, count in left_out.items()]
    if found >= MAX_FILES:
        notes.append(f"only the first {MAX_FILES} source files are mapped")
    return SourceIndex(files, tuple(parsed), tuple(notes))


def _source_files(
    root: Path, hidden: Hidden | None
) -> Iterator[tuple[str, LanguageSpec, os.stat_result]]:
    """Source files below `root`, directory by directory, with their own (lstat) status."""
    ignore = GitIgnore(root, hidden)
    pending = [root]
    found = 0
    while pending:
        directory = pending.pop()
        subdirectories: list[Path] = []
        # One level at a time, so pruned directories are never entered: `walk` itself would
        # descend into `node_modules` only for the entries to be dropped here.
        for entry in walk(root, directory, ignore, max_depth=1):
            name = entry.parts[-1]
            if entry.is_dir:
                if not name.startswith(".") and name not in PRUNED_DIRECTORIES:
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
        pending.extend(reversed(subdirectories))


def _parse(path: Path, spec: LanguageSpec, grammars: Grammars) -> FileTags | None:
    """The file's tags; None when it is binary or too large.

    Raises:
        OSError: The file cannot be read.
        GrammarMissing: Its language's grammar is not installed.
    """
    fd = os.open(path, _READ_FLAGS)  # O_NOFOLLOW: a symlink swapped in is not followed
    with os.fdopen(fd, "rb") as file:
        source = file.read(MAX_FILE_BYTES + 1)
    if len(source) > MAX_FILE_BYTES or b"\0" in source[:8192]:
        return None
    return extract_tags(source, grammars.get(spec))
