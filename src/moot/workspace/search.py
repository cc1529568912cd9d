"""Searching file contents: the request, the pure-Python search, and the one output format.

Two backends answer a `SearchRequest`: ripgrep (`moot.workspace.ripgrep`) when it is
installed, and `search_python` otherwise. Both yield the same `FileHits` in the same order
(path order, then line), so `format_hits` prints the same text whichever ran:

    content:  path:line:text for matches, path-line-text for context, `--` between groups
    files:    path
    count:    path:matching lines

Both skip what a walk skips (`moot.workspace.walk`), and skip files with a NUL byte as binary
unless a UTF-16/32 byte order mark says they are text.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Literal

import msgspec

from moot.workspace.ignore import GitIgnore, GlobPattern, Hidden, HiddenInodes
from moot.workspace.no_follow import PathRefused, open_dir_chain
from moot.workspace.text import sniff_encoding, split_lines
from moot.workspace.walk import below, walk_files

OutputMode = Literal["content", "files", "count"]

MAX_CONTENT_LINES = 200
MAX_FILES = 200
MAX_LINE_CHARS = 300


class SearchError(Exception):
    """The search could not run (a bad regular expression, usually)."""


class SearchRequest(msgspec.Struct, frozen=True):
    """What to search for, where, and which files to look at."""

    pattern: str
    """A regular expression, matched against each line."""
    root: Path
    """The workspace root; output paths are relative to it."""
    start: Path
    """The real path of the file or directory to search, inside `root`."""
    include: GlobPattern | None = None
    """Only files matching this, relative to `start`."""
    exclude: GlobPattern | None = None
    """Not files matching this, or inside a directory matching it, relative to `start`."""
    context: int = 0
    """Lines of context before and after each match."""
    ignore_case: bool = False
    hidden: Hidden | None = None
    """Paths no search may show (a `Read(...)` deny rule covers them)."""
    inodes: HiddenInodes | None = None
    """What those rules hide under another name (a hard link): such a file is skipped."""
    deadline: float | None = None
    """A `time.monotonic()` value to stop searching at (`moot.workspace.walk.WALK_SECONDS`
    from the start when None)."""

    def wants(self, rel: str) -> bool:
        """Whether the file at `rel` (relative to the root) may be shown and passes the globs."""
        if self.hidden is not None and self.hidden(rel, False):
            return False
        if self.include is None and self.exclude is None:
            return True
        name = below(self.start.relative_to(self.root).as_posix(), rel)
        if self.include is not None and not self.include.matches(name):
            return False
        return self.exclude is None or not self.exclude.matches_or_under(name)


class Hit(msgspec.Struct, frozen=True):
    """One line shown: a match, or context around one."""

    line: int
    text: str
    is_match: bool


FileHits = tuple[str, list[Hit]]
"""A file's path relative to the root and its hits in line order; only files with a match."""


def compile_pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """Compile a search pattern for the Python backend.

    Raises:
        SearchError: The pattern is not a valid regular expression.
    """
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise SearchError(f"invalid regular expression {pattern!r}: {exc}") from None


def search_python(
    request: SearchRequest, notes: list[str] | None = None
) -> Generator[FileHits, None, None]:
    """Search with Python's `re`, line by line, in path order.

    Args:
        request: The search.
        notes: Gets what the search left out and why (too deep, out of time), once it ran to
            its end.

    Raises:
        SearchError: The pattern does not compile (raised before anything is yielded).
    """
    regex = compile_pattern(request.pattern, request.ignore_case)
    return _search_python(request, regex, [] if notes is None else notes)


class _Directory:
    """The open directory of the files being read: files side by side share one descriptor.

    Opening every file through its chain of directories (as `read_file_bytes` does) costs one
    `open` per path component; a walk reads a directory's files one after another, so keeping
    the last directory open makes that one `open` per directory. Every component is still
    opened with `O_NOFOLLOW`, so a symlink swapped in cannot lead outside.
    """

    def __init__(self, root: Path, inodes: HiddenInodes | None = None) -> None:
        self.root = root
        self.inodes = inodes
        """Files these cover (another name of a hidden file) read as None."""
        self.parts: tuple[str, ...] | None = None
        self.fd = -1

    def read(self, parts: tuple[str, ...]) -> bytes | None:
        """A regular file's bytes, or None for anything else (a FIFO, a device, another name
        of a file a deny rule hides).

        Raises:
            OSError, PathRefused: Unreadable, or a symlink on the way.
        """
        if parts[:-1] != self.parts:
            self.close()
            self.fd = open_dir_chain(self.root, parts[:-1])
            self.parts = parts[:-1]
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        with os.fdopen(os.open(parts[-1], flags, dir_fd=self.fd), "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None
            if self.inodes is not None and self.inodes.covers(info):
                return None
            return file.read()

    def lines(self, parts: tuple[str, ...]) -> list[str] | None:
        """A text file's lines as both backends number them; None for a binary file, one that
        cannot be read or is not a regular file, or a symlink on the way."""
        try:
            data = self.read(parts)
        except (OSError, PathRefused):
            return None  # unreadable files are skipped, as ripgrep does
        if data is None:
            return None
        encoding = sniff_encoding(data[:4])
        if encoding.codec == "utf-8" and b"\x00" in data:
            return None
        return split_lines(data[len(encoding.bom) :].decode(encoding.codec, "replace"))

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.parts, self.fd = None, -1


def _search_python(
    request: SearchRequest, regex: re.Pattern[str], notes: list[str]
) -> Generator[FileHits, None, None]:
    root = request.root
    directory = _Directory(root, request.inodes)
    try:
        yield from _search_files(request, regex, directory, notes)
    finally:
        directory.close()


def _search_files(
    request: SearchRequest, regex: re.Pattern[str], directory: _Directory, notes: list[str]
) -> Iterator[FileHits]:
    root = request.root
    files = walk_files(
        root, request.start, GitIgnore(root, request.hidden), deadline=request.deadline
    )
    try:
        for entry in files:
            rel = entry.rel
            if not request.wants(rel):
                continue
            lines = directory.lines(entry.parts)
            if lines is None:
                continue
            matched = [number for number, line in enumerate(lines) if regex.search(line)]
            if matched:
                yield rel, with_context(lines, matched, request.context)
    finally:  # also when the caller stops reading at its cap: what the walk met so far
        if files.stopped:
            notes.append(files.stopped)


def confirmed(
    root: Path, found: Iterable[FileHits], inodes: HiddenInodes | None = None
) -> Iterator[FileHits]:
    """The files whose hits are what the file holds when read as `search_python` reads it.

    ripgrep opens paths as they are when it gets to them, following a symlink that a command
    running beside the search (a background shell, a peer's) swapped in for a directory or
    file since it was listed; read again through `O_NOFOLLOW` descriptors, such a file fails
    to open or holds other lines, and is dropped; so is another name of a hidden file
    (`inodes`).
    """
    directory = _Directory(root, inodes)
    try:
        for rel, hits in found:
            lines = directory.lines(tuple(rel.split("/")))
            if lines is not None and all(
                0 < hit.line <= len(lines) and lines[hit.line - 1] == hit.text for hit in hits
            ):
                yield rel, hits
    finally:
        directory.close()


def with_context(lines: list[str], matched: list[int], context: int) -> list[Hit]:
    """Hits for the matching line indexes (0-based) and `context` lines around each."""
    if not context:
        return [Hit(index + 1, lines[index], True) for index in matched]
    is_match = set(matched)
    shown: set[int] = set()
    for index in matched:
        shown.update(range(max(0, index - context), min(len(lines), index + context + 1)))
    return [Hit(index + 1, lines[index], index in is_match) for index in sorted(shown)]


def format_hits(hits: Iterable[FileHits], output: OutputMode, *, context: int = 0) -> str:
    """The search result as the model reads it, capped; consumes no more hits than it shows.

    Args:
        hits: What a backend found.
        output: content, files or count.
        context: The context asked for; with any, groups of lines are separated by `--`.
    """
    if output == "content":
        return _format_content(hits, separate=context > 0)
    shown: list[str] = []
    for rel, file_hits in hits:
        if len(shown) == MAX_FILES:
            shown.append(f"[capped at {MAX_FILES} files; narrow the path or glob]")
            break
        count = sum(hit.is_match for hit in file_hits)
        shown.append(rel if output == "files" else f"{rel}:{count}")
    return "\n".join(shown) if shown else "No matches."


def _format_content(hits: Iterable[FileHits], *, separate: bool) -> str:
    out: list[str] = []
    previous: tuple[str, int] | None = None
    for rel, file_hits in hits:
        for hit in file_hits:
            if len(out) >= MAX_CONTENT_LINES:
                out.append(
                    f"[capped at {MAX_CONTENT_LINES} lines; narrow the pattern, path or glob,"
                    ' or use output="files"]'
                )
                return "\n".join(out)
            if separate and previous is not None and previous != (rel, hit.line - 1):
                out.append("--")
            mark = ":" if hit.is_match else "-"
            text = hit.text if len(hit.text) <= MAX_LINE_CHARS else hit.text[:MAX_LINE_CHARS] + "…"
            out.append(f"{rel}{mark}{hit.line}{mark}{text}")
            previous = (rel, hit.line)
    return "\n".join(out) if out else "No matches."
