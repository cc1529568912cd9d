"""Other names of what `Read(...)` deny rules hide: a hard link shares its file's content.

A rule names paths, but the content it keeps from the model lives in an inode, which a hard
link gives another name: with `hard_env` linked to `.env`, `Read(./.env)` would hide `.env`
and show the same bytes as `hard_env`. So what the rules hide is denied by inode as well as by
path (issue 28, item 9):

- The sandbox masks every name of a hidden file's inode that it finds in the workspace, and
  keeps every name of a file `Edit(...)` rules make read-only read-only (`with_other_names`,
  after the masks' walk; `moot.permissions.masks`; not the files of a read-only directory,
  which may be big: a link to one of those stays writable). Only a hidden file
  with more than one name (`st_nlink` > 1) has any, so a workspace without one costs an
  `lstat` per hidden file; one with one costs a walk of the workspace (an `lstat` a file),
  stopped once every name is found: on 50,000 files, 0.14 s when the other name was the last
  file walked, 0.28 s when one lies outside the workspace (the walk goes to the end), before
  every command while it lasts (measured on a loaded 2-core machine; not cached). A link
  made inside the sandbox to a masked file fails (`EXDEV`: the mask is another mount), and a
  link made to a file before a rule hid it is masked from the next command on.
- The file tools refuse a file whose inode is a hidden file's (`DeniedInodes`, one per call
  and worked out at its first file with more than one name, so most calls pay nothing):
  `read`, the editing tools, `grep` (both backends skip it), the repo map and symbols, the
  files a prompt attaches, and what the git tools print of the work tree.

Not covered: a name outside the workspace of a file hidden inside it (bubblewrap shows the
host's files read-only, so `cat ~/elsewhere/env-link` reads it), a hidden file outside the
workspace (`Read(~/.ssh/**)`) with a name inside it made before the session (the sandbox
cannot make one: those files are out of its sight), and a copy made before a rule hid the
file, which is another inode altogether.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from moot.sandbox.base import SandboxMasks

Inode = tuple[int, int]
"""A file's device and inode number."""

_NOT_DENIED = frozenset({".git"})
"""Hidden for another reason (git would show what the rules hide), not because a rule names
its files: its files' other names (objects a local clone shares) are not secrets."""


def hidden_inodes(masks: SandboxMasks, base: str) -> dict[Inode, int]:
    """The inodes of the hidden files of `masks` that have other names, with how many names
    each has: the hidden files, and the files below the hidden directories.

    Args:
        masks: What the deny rules hide (`moot.permissions.masks`).
        base: The workspace root, a real path.
    """
    dirs = [rel for rel in masks.hidden_dirs if rel not in _NOT_DENIED]
    return _linked(base, [*masks.hidden_files, *dirs])


def _linked(base: str, paths: list[str]) -> dict[Inode, int]:
    """The files at or below `paths` that have more than one name, with their name counts."""
    found: dict[Inode, int] = {}
    stack = [path if path.startswith("/") else f"{base}/{path}" for path in paths]
    while stack:
        path = stack.pop()
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            found[(info.st_dev, info.st_ino)] = info.st_nlink
        elif stat.S_ISDIR(info.st_mode):
            try:
                stack += [entry.path for entry in os.scandir(path)]
            except OSError:
                continue
    return found


def other_names(base: str, inodes: dict[Inode, int], masks: SandboxMasks) -> dict[str, Inode]:
    """The workspace paths (relative) of `inodes` that `masks` does not cover already, each
    with its inode.

    A walk of the workspace that follows no link and skips the hidden directories; it stops
    once every name of every inode was seen (a name outside the workspace, or under a hidden
    directory, keeps it going to the end).
    """
    if not inodes:
        return {}
    masked = {*masks.hidden_files, *masks.read_only}
    skipped = set(masks.hidden_dirs)
    left = sum(inodes.values())  # every name, the masked ones included
    found: dict[str, Inode] = {}
    stack = [""]
    while stack and left > 0:
        rel_dir = stack.pop()
        try:
            entries = list(os.scandir(f"{base}/{rel_dir}" if rel_dir else base))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if rel not in skipped:
                        stack.append(rel)
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                # An `lstat` each: the listing's inode number is not the file's everywhere
                # (overlayfs), and this walk runs only when a masked file has another name.
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            inode = (info.st_dev, info.st_ino)
            if inode in inodes:
                left -= 1
                if rel not in masked:
                    found[rel] = inode
    return found


def with_other_names(masks: SandboxMasks, base: str) -> SandboxMasks:
    """`masks` with every other name in the workspace of a hidden file hidden too, and of a
    read-only file (`Edit(...)` rules) read-only: writing through a hard link changes it."""
    hidden = hidden_inodes(masks, base)
    # Read-only files only: a directory kept from edits may be big (`Edit(vendor/**)`), and
    # walking it before each command would cost what the masks' own walk spares.
    locked = {
        inode: count
        for path in masks.read_only
        if not os.path.isdir(path if path.startswith("/") else f"{base}/{path}")
        for inode, count in _linked(base, [path]).items()
    }
    names = other_names(base, {**locked, **hidden}, masks)
    if not names:
        return masks
    secret = {rel for rel, inode in names.items() if inode in hidden}
    files = tuple(sorted({*masks.hidden_files, *secret}))
    read_only = tuple(sorted({*masks.read_only, *(names.keys() - secret)}))
    return SandboxMasks(files, masks.hidden_dirs, read_only)


class DeniedInodes:
    """For one tool call: whether a file is another name of one the rules hide
    (`moot.workspace.ignore.HiddenInodes`). The hidden files are worked out at the first file
    asked about that has more than one name, and kept for the rest of the call."""

    def __init__(self, masks: Callable[[], SandboxMasks], base: str) -> None:
        """Args:
        masks: What the deny rules hide now (the session's mask source).
        base: The workspace root, a real path.
        """
        self._masks = masks
        self._base = base
        self._inodes: dict[Inode, int] | None = None

    def covers(self, info: os.stat_result) -> bool:
        """Whether the file `info` describes is a hidden file, whatever its name."""
        if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
            return False  # its only name is the one asked about, which the rules judged
        if self._inodes is None:
            self._inodes = hidden_inodes(self._masks(), self._base)
        return (info.st_dev, info.st_ino) in self._inodes


def denied_inodes(
    masks: Callable[[], SandboxMasks] | None, root: Path
) -> Callable[[], DeniedInodes] | None:
    """The workspace's `hidden_inodes` factory: a `DeniedInodes` per call; None when no rule
    hides a path (`masks` is None)."""
    if masks is None:
        return None
    base = os.path.realpath(root)
    source = masks
    return lambda: DeniedInodes(source, base)
