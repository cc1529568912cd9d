"""What the sandbox masks in the workspace, worked out from the permission deny rules.

The file tools refuse what deny rules cover (`moot.permissions.decide`), and so do shell
command lines that name the file (`cat .env`); but a program reads and writes what it likes
(`grep -r SECRET .`, a script). `sandbox_masks` turns the rules into paths for the sandbox to
mask (`SandboxMasks`), and the backends apply them to every command:

- `Read(...)`: each existing file or directory a rule covers is hidden: an empty read-only
  file or directory takes its place. A covered directory is hidden whole and not walked.
- `Edit(...)`, `Write(...)`: each existing file or directory a rule covers is read-only.
- `.git` is hidden whole when its index tracks a hidden file (`moot.permissions.tracked`):
  git would show it otherwise (`git diff` prints its lines as deleted, `git show HEAD:.env`
  reads it). Not contained: a denied file that is only in git's history, not in the index,
  can still be read with `git log -p`.

The walk sees every file, gitignored ones included (`.env` usually is), and follows no
symlink. A symlink a rule covers has its target masked instead (inside the sandbox the link
then leads to the mask); a symlink to a covered file needs nothing, its target being masked
where it lies. A path reached only through a symlinked directory is matched where it really
is, not by the name it has through the link.

Paths appear and disappear during a session, so the backends ask again before each command
(`mask_source`). To keep that cheap, the rules are compiled once per call (`_Matcher`, which
must agree with `PathPattern.matches`; `tests/test_permissions_masks.py` checks that it does),
and a pattern that starts with literal names (`./.env`, `secrets/**`) is looked for only
below them: with no floating pattern (`.env`, `*.pem`, `**/x`) nothing else is walked.
A walk costs about 3 µs a path (7 ms for 2,000 files and three rules); literal rules alone
cost a few `lstat`s.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from moot.permissions.rules import Rule, RuleSet
from moot.permissions.tracked import TrackedCache, hide_git_if_tracked
from moot.sandbox.base import MaskSource, SandboxMasks

_WILDCARD = re.compile(r"[*?\[\\]")


def mask_source(rules: RuleSet, root: Path) -> MaskSource | None:
    """The `SandboxPolicy.masks` for `rules`: None when no deny rule names a path.

    Args:
        rules: The rules in force; only the deny rules matter.
        root: The workspace root.
    """
    if not any(rule.path is not None for rule in rules.deny):
        return None
    return functools.partial(sandbox_masks, rules, root, TrackedCache())


def sandbox_masks(rules: RuleSet, root: Path, tracked: TrackedCache | None = None) -> SandboxMasks:
    """The existing workspace paths the deny rules cover, as the sandbox must mask them now.

    Args:
        rules: The rules in force: `Read(...)` deny rules hide, `Edit(...)` and `Write(...)`
            ones make read-only.
        root: The workspace root.
        tracked: Keeps what git said about its index between calls (`tracked.TrackedCache`).

    Returns:
        Sorted workspace-relative paths (see `SandboxMasks`); empty at once, without looking
        at the disk, when no deny rule names a path.
    """
    hide = [r for r in rules.deny if r.path is not None and r.covers("read")]
    lock = [r for r in rules.deny if r.path is not None and (r.covers("edit") or r.covers("write"))]
    if not hide and not lock:
        return SandboxMasks()
    base = os.path.realpath(root)
    found = _Found(base, [_Matcher(r, base) for r in hide], [_Matcher(r, base) for r in lock])
    for start in _starts(found.hiders + found.lockers):
        found.walk(start)
    return hide_git_if_tracked(found.masks(), base, tracked)


class _Matcher:
    """One rule's `PathPattern.matches`, for workspace-relative paths, set up once."""

    def __init__(self, rule: Rule, base: str) -> None:
        assert rule.path is not None
        self.rule = rule
        self.base = base
        self._regex = rule.path.regex
        self.prefixes: list[str] = []
        """For each anchor the root lies in: the root's path below it ("" or "a/b/")."""
        self.exact = False
        """An anchor lies inside the workspace (a home directory below it): no short cuts."""
        for anchor in _anchors(rule.path.anchor, base):
            if anchor == base:
                self.prefixes.append("")
            elif _below(base, anchor):
                self.prefixes.append(base[len(anchor.rstrip("/")) + 1 :] + "/")
            elif _below(anchor, base):
                self.exact = True
        self.floating = rule.path.floating
        self._from_slash = base.lstrip("/") + "/" if base != "/" else ""

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether the workspace path `rel` is covered (`PathPattern.matches`)."""
        if self.exact:
            assert self.rule.path is not None
            return self.rule.path.matches(f"{self.base}/{rel}", self.base, is_dir=is_dir)
        if self.floating:  # matches at any depth, so below the root whenever in it
            return self._match(self._from_slash + rel, is_dir)
        return any(self._match(prefix + rel, is_dir) for prefix in self.prefixes)

    def scopes(self) -> list[str]:
        """Workspace paths every match lies at or below: [""] for anywhere, [] for nowhere."""
        if self.floating or self.exact:
            return [""]
        assert self.rule.path is not None
        literal: list[str] = []
        for part in self.rule.path.pattern.lstrip("/").split("/"):
            if not part or _WILDCARD.search(part):
                break
            literal.append(part)
        head = "/".join(literal)
        scopes = []
        for prefix in self.prefixes:
            if not prefix:
                scopes.append(head)
            elif head.startswith(prefix):
                scopes.append(head[len(prefix) :])
            elif not head or prefix.startswith(head + "/"):
                scopes.append("")  # the root lies below the literal part
        return scopes

    def _match(self, rel: str, is_dir: bool) -> bool:
        if self._regex.match(rel) is not None:
            return True
        return is_dir and self._regex.match(rel + "/") is not None


def _anchors(anchor: str, base: str) -> set[str]:
    """As `rules._anchors`: the anchor as written and as its real path."""
    absolute = os.path.normpath(os.path.join(base, anchor)) if anchor else base
    return {absolute, os.path.realpath(absolute)}


def _below(path: str, directory: str) -> bool:
    return path.startswith(directory.rstrip("/") + "/")


def _starts(matchers: list[_Matcher]) -> list[str]:
    """Where to walk from: the root ("") or the outermost of the rules' literal scopes."""
    scopes = sorted({scope for matcher in matchers for scope in matcher.scopes()})
    if "" in scopes:
        return [""]
    outermost: list[str] = []
    for scope in scopes:  # sorted: a directory comes before what lies below it
        if not any(_below(scope, kept) for kept in outermost):
            outermost.append(scope)
    return outermost


@dataclass
class _Found:
    """The walk and what it found."""

    base: str
    hiders: list[_Matcher]
    lockers: list[_Matcher]
    hidden_files: set[str] = field(default_factory=set)
    hidden_dirs: set[str] = field(default_factory=set)
    read_only: set[str] = field(default_factory=set)

    def walk(self, start: str) -> None:
        """Visit `start` (the root's entries for "") and everything below it, links unfollowed."""
        stack: list[str] = []
        if not start:
            stack.append("")
        elif self._reachable(start):
            try:
                mode = os.lstat(f"{self.base}/{start}").st_mode
            except OSError:
                return
            if self.visit(start, stat.S_ISDIR(mode), stat.S_ISLNK(mode)):
                stack.append(start)
        while stack:
            rel = stack.pop()
            try:
                entries = os.scandir(f"{self.base}/{rel}" if rel else self.base)
            except OSError:
                continue  # gone, or not ours to read: the sandbox cannot read it either
            with entries:
                for entry in entries:
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    try:
                        is_dir, is_link = entry.is_dir(follow_symlinks=False), entry.is_symlink()
                    except OSError:
                        continue
                    if self.visit(child, is_dir, is_link):
                        stack.append(child)

    def visit(self, rel: str, is_dir: bool, is_link: bool) -> bool:
        """Record what the rules say about `rel`; whether to walk below it."""
        if is_link:  # matched as what it leads to, as the file tools resolve it
            is_dir = os.path.isdir(f"{self.base}/{rel}")
        hidden = any(m.matches(rel, is_dir) for m in self.hiders)
        locked = not hidden and any(m.matches(rel, is_dir) for m in self.lockers)
        if is_link:
            if hidden or locked:
                self._mask_target(rel, hidden)
            return False
        if hidden:
            (self.hidden_dirs if is_dir else self.hidden_files).add(rel)
            return False
        if locked:
            self.read_only.add(rel)
            return is_dir and bool(self.hiders)  # files below may still need hiding
        return is_dir

    def masks(self) -> SandboxMasks:
        """What was found, without paths another mask already covers."""
        dirs = {d for d in self.hidden_dirs if not _inside_any(d, self.hidden_dirs)}
        files = {f for f in self.hidden_files if f not in dirs and not _inside_any(f, dirs)}
        hidden = dirs | files
        locked = {p for p in self.read_only if p not in hidden and not _inside_any(p, dirs)}
        locked = {p for p in locked if not _inside_any(p, locked)}
        return SandboxMasks(tuple(sorted(files)), tuple(sorted(dirs)), tuple(sorted(locked)))

    def _reachable(self, rel: str) -> bool:
        """Whether every directory above `rel` is a real one (the walk follows no links)."""
        parts = rel.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            try:
                mode = os.lstat(f"{self.base}/{'/'.join(parts[:depth])}").st_mode
            except OSError:
                return False
            if not stat.S_ISDIR(mode):
                return False
        return True

    def _mask_target(self, rel: str, hidden: bool) -> None:
        real = os.path.realpath(f"{self.base}/{rel}")
        # Never the workspace or what holds it: a mask there would take everything.
        if real == self.base or _below(self.base, real) or not os.path.exists(real):
            return
        path = real[len(self.base) + 1 :] if _below(real, self.base) else real
        if not hidden:
            self.read_only.add(path)
        elif os.path.isdir(real):
            self.hidden_dirs.add(path)
        else:
            self.hidden_files.add(path)


def _inside_any(path: str, directories: set[str]) -> bool:
    """Whether a directory in `directories` holds `path` (strictly)."""
    parent = os.path.dirname(path)
    while parent and parent != "/":
        if parent in directories:
            return True
        parent = os.path.dirname(parent)
    return False
