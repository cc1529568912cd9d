"""What the sandbox masks in the workspace, worked out from the permission deny rules.

The file tools refuse what deny rules cover (`moot.permissions.decide`), and so do shell
command lines that name the file (`cat .env`); but a program reads and writes what it likes
(`grep -r SECRET .`, a script). `sandbox_masks` turns the rules into paths for the sandbox to
mask (`SandboxMasks`), and the backends apply them to every command:

- `Read(...)`: each existing file or directory a rule covers is hidden: an empty read-only
  file or directory takes its place. A covered directory is hidden whole and not walked.
  Every other name of a hidden file's inode in the workspace (a hard link) is hidden too
  (`moot.permissions.links`).
- `Edit(...)`, `Write(...)`: each existing file or directory a rule covers is read-only.
- `.git` is hidden whole when git would show what `Read(...)` rules hide: its index tracks a
  hidden file, or a commit in its object store (history, stashes, reflogs, packs) names a
  covered path (`moot.permissions.tracked`): `git diff` would print a masked file's lines as
  deleted, `git show HEAD:.env` and `git log -p --all` read it from the object store.

The walk sees every file, gitignored ones included (`.env` usually is), and follows no
symlink. A symlink a rule covers has its target masked instead (inside the sandbox the link
then leads to the mask); a symlink to a covered file needs nothing, its target being masked
where it lies. A path reached only through a symlinked directory is matched where it really
is, not by the name it has through the link.

Paths appear and disappear during a session, so the backends ask again before each command
(`mask_source`). To keep that cheap, the rules are compiled once per call (`_Matcher`, which
must agree with `PathPattern.matches`; `tests/permissions/test_permissions_masks.py` checks that
it does), and a pattern that starts with literal names (`./.env`, `secrets/**`) is looked for only
below them: with no floating pattern (`.env`, `*.pem`, `**/x`) nothing else is walked.
A walk costs about 3 µs a path (10 ms for 2,000 files and three rules, 200 ms for 50,000);
literal rules alone cost a few `lstat`s.

A session's source (`CachedMaskSource`) also remembers, for each directory it walked, the
directory's identity (device, inode, mtime, ctime) and what the walk concluded about its
entries: which it hides or makes read-only, which subdirectories it walks. The next call
`lstat`s each directory and lists again only those whose identity changed (an entry made,
removed or renamed changes both times); the others' conclusions stand. Every subdirectory is
still visited, each with its own identity, so a change deep down is seen. Two things a
directory's identity does not tell are looked at every time: the start of each walk, and the
symlinks a rule could cover (where a link leads changes without its directory). Timestamps are
coarse (a clock tick, a second on some file systems), so a change in the tick of a listing can
leave them as they were: as git does with its index ("racy" entries), a listing is not kept
when its directory's mtime or ctime lies within `RACY_NS` of when the walk began; a directory
is trusted only once it has been still for that long. A walk over unchanged directories costs
one `lstat` each: about 0.5 ms for the 2,000 files above, 20 ms for 50,000 files in 5,500
directories (`benchmarks/sandbox_overhead.py`).
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from moot.permissions.links import with_other_names
from moot.permissions.rules import Rule, RuleSet
from moot.permissions.tracked import TrackedCache, hide_git_if_tracked
from moot.sandbox.base import MaskSource, SandboxMasks

_WILDCARD = re.compile(r"[*?\[\\]")

RACY_NS = 2_000_000_000
"""How long (ns) a directory must have been still for its listing to be kept: a change in
the same timestamp tick as the listing would leave its mtime and ctime as they were."""


def mask_source(rules: RuleSet, root: Path) -> MaskSource | None:
    """The `SandboxPolicy.masks` for `rules`: None when no deny rule names a path.

    Args:
        rules: The rules in force; only the deny rules matter.
        root: The workspace root.
    """
    if not any(rule.path is not None for rule in rules.deny):
        return None
    return CachedMaskSource(rules, root)


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
    found = _found(rules, root)
    if found is None:
        return SandboxMasks()
    for start in _starts(found.hiders + found.lockers):
        found.walk(start)
    return found.with_git(tracked)


class CachedMaskSource:
    """A session's `MaskSource`: `sandbox_masks`, with what each directory held remembered
    between calls (see the module docstring). One call at a time: the backends call it from
    worker threads, which may overlap."""

    def __init__(
        self,
        rules: RuleSet,
        root: Path,
        *,
        clock: Callable[[], int] = time.time_ns,
        workspace_root: Path | None = None,
    ) -> None:
        """A source that remembers nothing yet.

        Args:
            rules: The rules in force; read again at each call.
            root: The directory walked: the workspace root, or an added root (`--add-dir`),
                whose masks are then relative to it.
            clock: The time now in ns since the epoch, as file timestamps count it.
            workspace_root: The workspace root relative rules hang from, when `root` is not
                it.
        """
        self.rules = rules
        self.root = root
        self.workspace_root = workspace_root
        self._clock = clock
        self._lock = threading.Lock()
        self._tracked = TrackedCache(clock)
        self._listings: dict[str, _Listing] = {}
        self._key: tuple[object, ...] | None = None

    def __call__(self) -> SandboxMasks:
        """The masks in force now (what `sandbox_masks` returns)."""
        with self._lock:
            found = _found(self.rules, self.root, self.workspace_root)
            if found is None:
                return SandboxMasks()
            key = (found.base, *(m.key for m in found.hiders), "|", *(m.key for m in found.lockers))
            if key != self._key:  # listings hold what these rules concluded, from this root
                self._key, self._listings = key, {}
            found.known, found.since = self._listings, self._clock() - RACY_NS
            for start in _starts(found.hiders + found.lockers):
                found.walk(start)
            self._listings = found.kept  # the directories gone since are forgotten
            return found.with_git(self._tracked)


def _found(rules: RuleSet, root: Path, workspace_root: Path | None = None) -> _Found | None:
    """A walk of `root` for the deny rules that name paths, relative ones hanging from
    `workspace_root` (None: from `root`); None when no rule names a path."""
    hide = [r for r in rules.deny if r.path is not None and r.covers("read")]
    lock = [r for r in rules.deny if r.path is not None and (r.covers("edit") or r.covers("write"))]
    if not hide and not lock:
        return None
    base = os.path.realpath(root)
    at = base if workspace_root is None else os.path.realpath(workspace_root)
    hiders = [_Matcher(r, base, at) for r in hide]
    return _Found(base, hiders, [_Matcher(r, base, at) for r in lock])


class _Matcher:
    """One rule's `PathPattern.matches`, for paths relative to the walked root, set up once."""

    def __init__(self, rule: Rule, base: str, workspace: str) -> None:
        assert rule.path is not None
        self.rule = rule
        self.base = base
        self.workspace = workspace
        """The workspace root (real path) relative anchors hang from; `base` unless an added
        root is walked."""
        self._regex = rule.path.regex
        self.prefixes: list[str] = []
        """For each anchor the root lies in: the root's path below it ("" or "a/b/")."""
        self.exact = False
        """An anchor lies inside the walked root (a home directory below it): no short cuts."""
        anchors = _anchors(rule.path.anchor, workspace)
        self.key = (rule, *sorted(anchors))
        """What its answers depend on besides the path asked about (its anchors' real paths)."""
        for anchor in anchors:
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
            return self.rule.path.matches(f"{self.base}/{rel}", self.workspace, is_dir=is_dir)
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


class _Listing(msgspec.Struct, frozen=True):
    """What the walk concluded about one directory's entries (workspace-relative paths)."""

    identity: tuple[int, int, int, int] | None
    """The directory's device, inode, mtime and ctime (ns) before it was listed."""
    hidden_files: tuple[str, ...]
    hidden_dirs: tuple[str, ...]
    read_only: tuple[str, ...]
    links: tuple[str, ...]
    """Symlinks a rule could cover: judged at each walk, by where they lead then."""
    below: tuple[str, ...]
    """The subdirectories to walk."""


class _Found(msgspec.Struct):
    """The walk and what it found."""

    base: str
    hiders: list[_Matcher]
    lockers: list[_Matcher]
    hidden_files: set[str] = set()
    hidden_dirs: set[str] = set()
    read_only: set[str] = set()
    known: dict[str, _Listing] | None = None
    """The listings an earlier walk kept, by directory; None lists every directory."""
    since: int = 0
    """A directory changed after this (ns since the epoch) is listed and its listing not kept."""
    kept: dict[str, _Listing] = {}
    """The listings this walk made or reused, for the next."""

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
            listing = self._listing(stack.pop())
            if listing is None:
                continue  # gone since it was seen
            self.hidden_files.update(listing.hidden_files)
            self.hidden_dirs.update(listing.hidden_dirs)
            self.read_only.update(listing.read_only)
            for link in listing.links:
                self.visit(link, is_dir=False, is_link=True)
            stack.extend(listing.below)

    def _listing(self, rel: str) -> _Listing | None:
        """What `rel`'s entries are to the rules: remembered while the directory is unchanged."""
        path = f"{self.base}/{rel}" if rel else self.base
        if self.known is None:
            return self._list(rel, path, None)
        identity = _directory_identity(path)
        if identity is None:
            return None
        listing = self.known.get(rel)
        if listing is None or listing.identity != identity:
            listing = self._list(rel, path, identity)
            # Racy: a change later in the tick the directory last changed in would leave its
            # identity as it is now; such a listing is made again next time.
            if listing is None or max(identity[2], identity[3]) >= self.since:
                return listing
        self.kept[rel] = listing
        return listing

    def _list(
        self, rel: str, path: str, identity: tuple[int, int, int, int] | None
    ) -> _Listing | None:
        files: list[str] = []
        dirs: list[str] = []
        read_only: list[str] = []
        links: list[str] = []
        below: list[str] = []
        try:
            entries = os.scandir(path)
        except (FileNotFoundError, NotADirectoryError):
            return None  # gone since it was seen
        except OSError:
            if not self.hiders or not rel:
                return None
            # Unlistable (`chmod 311 cfg`), but its files still open by name: a file the rules
            # hide may be in it, so the whole directory is hidden. Fail closed.
            return _Listing(identity, (), (rel,), (), (), ())
        with entries:
            for entry in entries:
                child = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    is_dir, is_link = entry.is_dir(follow_symlinks=False), entry.is_symlink()
                except OSError:
                    continue
                if is_link:  # judged at each walk (`visit`); one no rule can cover needs nothing
                    if any(any(self._judge(child, as_dir)) for as_dir in (False, True)):
                        links.append(child)
                    continue
                hidden, locked = self._judge(child, is_dir)
                if hidden:
                    (dirs if is_dir else files).append(child)
                elif locked:
                    read_only.append(child)
                if is_dir and not hidden and (not locked or self.hiders):
                    below.append(child)  # below a read-only directory files may still be hidden
        return _Listing(identity, (*files,), (*dirs,), (*read_only,), (*links,), (*below,))

    def _judge(self, rel: str, is_dir: bool) -> tuple[bool, bool]:
        """Whether the rules hide `rel`, and if not, whether they make it read-only."""
        hidden = any(m.matches(rel, is_dir) for m in self.hiders)
        return hidden, not hidden and any(m.matches(rel, is_dir) for m in self.lockers)

    def visit(self, rel: str, is_dir: bool, is_link: bool) -> bool:
        """Record what the rules say about `rel` (a walk's start, or a symlink); whether to
        walk below it."""
        if is_link:  # matched as what it leads to, as the file tools resolve it
            is_dir = os.path.isdir(f"{self.base}/{rel}")
        hidden, locked = self._judge(rel, is_dir)
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

    def with_git(self, tracked: TrackedCache | None) -> SandboxMasks:
        """`masks()`, with `.git` hidden when git would show what the rules hide."""
        covers = None
        if self.hiders:

            def covers(rel: str, is_dir: bool) -> bool:
                return any(m.matches(rel, is_dir) for m in self.hiders)

        key = tuple(m.key for m in self.hiders)
        masks = with_other_names(self.masks(), self.base)  # a hard link shares the content
        return hide_git_if_tracked(masks, self.base, tracked, covers, key)

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


def _directory_identity(path: str) -> tuple[int, int, int, int] | None:
    """The device, inode, mtime and ctime (ns) of the directory at `path`; None when none is
    there (gone, or a symlink or a file now)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    return (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)


def _inside_any(path: str, directories: set[str]) -> bool:
    """Whether a directory in `directories` holds `path` (strictly)."""
    parent = os.path.dirname(path)
    while parent and parent != "/":
        if parent in directories:
            return True
        parent = os.path.dirname(parent)
    return False
