"""Landlock rules from what a policy grants and what it takes away again below.

Landlock only allows: a rule gives rights to a file or a directory and everything beneath it,
and what a path may do is the union of the rules on it and on every directory above it. There
is no rule that takes a right away. The policy has both: read `/` but not the home directory,
write the workspace but not its `.git`. So `plan` works the rules out from two maps:

- `grants`: a path and the rights given there (and beneath): `/` read, the workspace write;
- `caps`: a path and the most it may keep of what lies above it (0: hidden; `READ_DIR`: only
  its names show; `READ`: read-only); a grant deeper down gives rights back (the workspace
  inside a hidden home, the session's outputs inside moot's hidden data directory).

Each path then has the rights it is *meant* to have. A directory gets a rule for what holds
everywhere beneath it (the intersection down to every capped path below): it is *split* when
that is less than it is meant to have, and each of its entries gets the rest in a rule of its
own, those on the way to a capped path recursively. What a split directory loses for itself
is the price: entries cannot be made in it, removed from it or renamed in it (the workspace
root, holding `.git` and `.moot`, is one), and a file made in it by a command has its rights
only from the next command on (rules are worked out again before each). Where it lies on the
way to a path whose very names are hidden (moot's data, a home directory), it cannot even be
listed (`/` itself).

No directory on the way to a capped path may remove or rename what lies on that way, so no
command carries a mask off under another name (bubblewrap's `base.rename_guards`); a directory
holding a capped file changes none of its entries.

Rules attach to inodes: a file's rule reaches every hard link of it, so a file is never given
more than a capped file with the same inode keeps. Symbolic links get no rule (what they lead
to has its own).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping

import msgspec

from moot.sandbox import landlock_abi as ll


class Rule(msgspec.Struct, frozen=True):
    """Allow `rights` beneath `path`, which was the inode `inode` when planned: two plans with
    the same rules make the same ruleset (a file replaced since by another of the same name,
    as editors save, is another rule)."""

    path: str
    rights: int
    inode: int = 0


class _Node:
    __slots__ = ("cap", "children", "directory", "floor", "grant", "inode", "meant")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.directory = True
        self.grant = 0
        self.cap: int | None = None
        self.meant = 0
        self.floor = 0
        self.inode = 0


Signature = tuple[int, int, int] | None
"""A path's inode, mode and modification time (None: there is none)."""
RACY_NS = 1_000_000_000
"""A directory changed this recently when listed may change again within the same tick of
the file system's clock, unseen: its listing is not kept (`Planner`)."""


def signature(path: str, listed: bool = False) -> Signature:
    """What of `path` its rules depend on: its inode and mode, and for a directory that was
    listed its modification time too (0 otherwise: a capped `.git` changes all the time)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mode, info.st_mtime_ns if listed else 0)


class Planner:
    """`plan`, its rules kept while nothing it looked at changed: the same grants and caps,
    and each path it looked at (those of the grants and caps, every directory it listed) with
    the same inode, mode and modification time (a directory's changes when an entry is made,
    removed or renamed in it). Working the rules out is most of what a command's start costs
    in moot; checking them is a few dozen `lstat`."""

    def __init__(self) -> None:
        self._last: tuple[dict[str, int], dict[str, int], list[Rule], dict[str, Signature]]
        self._last = ({}, {}, [], {})

    def plan(self, grants: Mapping[str, int], caps: Mapping[str, int]) -> list[Rule]:
        """`plan(grants, caps)`, or the rules it gave last time when nothing changed."""
        last_grants, last_caps, rules, seen = self._last
        same = seen and last_grants == grants and last_caps == caps
        if same and all(
            signature(path, bool(kept and kept[2])) == kept for path, kept in seen.items()
        ):
            return rules
        looked: dict[str, Signature] = {}
        rules = plan(grants, caps, looked)
        now = _now_ns()
        racy = any(kept and now - kept[2] < RACY_NS for kept in looked.values())
        self._last = (dict(grants), dict(caps), rules, {} if racy else looked)
        return rules


def _now_ns() -> int:
    import time

    return time.time_ns()


def plan(
    grants: Mapping[str, int], caps: Mapping[str, int], looked: dict[str, Signature] | None = None
) -> list[Rule]:
    """The rules that give each path what `grants` and `caps` mean (see the module
    docstring). Paths are absolute and real; those that do not exist are left out. A blocking
    call: it lists every split directory. `looked` gets the signature of each path it looked
    at (`Planner`)."""
    looked = {} if looked is None else looked
    for path in (*grants, *caps):
        looked[path] = signature(path)
    root = _Node()
    inode_caps: dict[tuple[int, int], int] = {}
    for path, rights in grants.items():
        if (node := _insert(root, path)) is not None:
            node.grant |= rights
    for path, rights in caps.items():
        if (node := _insert(root, path)) is not None:
            node.cap = rights if node.cap is None else node.cap & rights
            if not node.directory:
                info = os.stat(path)
                key = (info.st_dev, info.st_ino)
                inode_caps[key] = inode_caps.get(key, rights) & rights
    _mean(root, 0)
    _floor(root)
    rules: list[Rule] = []
    _emit(root, "/", 0, rules, inode_caps, looked)
    return rules


def _insert(root: _Node, path: str) -> _Node | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return None
    node = root
    for part in [p for p in path.split("/") if p]:
        node = node.children.setdefault(part, _Node())
    node.directory = stat.S_ISDIR(info.st_mode)
    node.inode = info.st_ino
    return node


def _mean(node: _Node, above: int) -> None:
    """What each node is meant to have: what lies above, capped here, with the grant here."""
    meant = above if node.cap is None else above & node.cap
    node.meant = meant | node.grant
    for child in node.children.values():
        _mean(child, node.meant)


def _floor(node: _Node) -> int:
    """What the directory above `node` may hold for it: what holds everywhere beneath it
    (kept in `node.floor`), but no right to remove or rename it (so a mask cannot be carried
    off under another name), and for a file no right over its directory's entries at all."""
    if not node.directory:
        node.floor = node.meant
        return node.meant | ll.READ_DIR
    floor = node.meant
    for child in node.children.values():
        floor &= _floor(child)
    node.floor = floor
    return floor & ~ll.REMOVE_DIR


def _emit(
    node: _Node,
    path: str,
    inherited: int,
    rules: list[Rule],
    inode_caps: dict[tuple[int, int], int],
    looked: dict[str, Signature],
) -> None:
    rights = node.floor & ~inherited
    if not node.directory:
        rights &= ll.FILE_RIGHTS & _inode_cap(path, inode_caps)
        if rights:
            rules.append(Rule(path, rights, node.inode))
        return
    if rights:
        rules.append(Rule(path, rights, node.inode or _inode(path)))
    held = inherited | rights
    rest = node.meant & ~held
    if rest:
        looked[path] = signature(path, listed=True)  # before the listing: a change shows
        for entry in _entries(path):
            if entry.name in node.children:
                continue
            try:
                if entry.is_symlink():
                    continue
                directory = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            give = rest if directory else rest & ll.FILE_RIGHTS & _inode_cap(entry.path, inode_caps)
            if give:
                rules.append(Rule(entry.path, give, entry.inode()))
    for name, child in node.children.items():
        _emit(child, os.path.join(path, name), held, rules, inode_caps, looked)


def _inode(path: str) -> int:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return 0


def _entries(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except OSError:
        return []


def _inode_cap(path: str, inode_caps: dict[tuple[int, int], int]) -> int:
    if not inode_caps:
        return -1
    try:
        info = os.lstat(path)
    except OSError:
        return 0
    return inode_caps.get((info.st_dev, info.st_ino), -1)
