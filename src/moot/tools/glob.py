"""The `glob` tool: files whose path matches a pattern, newest first.

Patterns read like .gitignore lines (see `moot.workspace.ignore`): `*.py` matches at any
depth, `src/**/*.ts` from the directory searched. Ignored files and `.git` are skipped. The
files come from the workspace's file index, so a glob in a 100,000-file repository reads no
directory that has not changed since the last look. A directory added beside the workspace
(`--add-dir`) is walked with its own ignore files, and its files are shown by absolute path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.workspace.errors import FILE_ERRORS, describe
from moot.workspace.ignore import GlobPattern
from moot.workspace.paths import Workspace
from moot.workspace.walk import below, walk_files

MAX_FILES = 200


def glob_tool(workspace: Workspace) -> FunctionTool:
    """The `glob` tool, bound to `workspace`."""

    @tool(
        name="glob",
        side_effect=SideEffect.READ_ONLY,
        description="Find files by glob (e.g. **/*.py), newest first. Skips .gitignored files.",
    )
    def glob(pattern: str, path: str = ".") -> ToolResult:
        try:
            return find_files(workspace, pattern, path)
        except FILE_ERRORS as exc:
            return ToolResult.error(describe(exc, path))

    return glob


def find_files(workspace: Workspace, pattern: str, path: str = ".") -> ToolResult:
    """What `glob` answers; raises the `FILE_ERRORS` it meets.

    A directory the workspace's file index entered is answered from the index (kept fresh by
    it, see `moot.workspace.file_index`); any other (an ignored directory asked for on
    purpose, an added root) is walked.
    """
    matcher = GlobPattern(pattern)
    root, start = workspace.resolve_search(path)
    if not os.path.isdir(start):
        raise NotADirectoryError(path)
    base = start.relative_to(root).as_posix()
    listing = workspace.file_listing() if root == workspace.root else None
    if listing is not None and (base == "." or base in listing.directories):
        found = _from_listing(workspace, matcher, base, listing.under(base))
        notes = listing.notes
    else:
        files = walk_files(root, start, workspace.ignore(root))
        found = [
            (entry.mtime_ns, workspace.shown(root, entry.rel))
            for entry in files
            if matcher.matches(below(base, entry.rel))
        ]
        notes = (files.stopped,) if files.stopped else ()
    stopped = "".join(f"\n[{note}]" for note in notes)
    if not found:
        return ToolResult(f"No files match {pattern!r}.{stopped}")
    found.sort(key=lambda item: (-item[0], item[1]))
    shown = [rel for _, rel in found[:MAX_FILES]]
    if len(found) > MAX_FILES:
        shown.append(f"[the {MAX_FILES} newest of {len(found)}; narrow the pattern or path]")
    return ToolResult("\n".join(shown) + stopped)


def _from_listing(
    workspace: Workspace, matcher: GlobPattern, base: str, files: Sequence[str]
) -> list[tuple[int, str]]:
    """The listed files below `base` that match, with their modification times (read now:
    the index keeps names, not times); files gone since the listing are left out."""
    if matcher.suffixes is not None:  # `str.endswith` in C first: most paths fail there
        files = [rel for rel in files if rel.endswith(matcher.suffixes)]
    files = matcher.select(files, 0 if base == "." else len(base) + 1)
    found: list[tuple[int, str]] = []
    root_fd = os.open(workspace.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for rel in files:
            try:
                info = os.stat(rel, dir_fd=root_fd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):  # not a symlink swapped in since it was listed
                found.append((info.st_mtime_ns, rel))
    finally:
        os.close(root_fd)
    return found
