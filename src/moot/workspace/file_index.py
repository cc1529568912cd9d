"""One listing of a workspace's files, kept fresh: what `glob`, `@path` completion and the
repository map read, so a 100,000-file repository is walked once a session, not once a call.

It lists what a walk finds (`moot.workspace.walk`): the regular files below the root that no
`.gitignore` hides (read from the root down, hidden files included, `.git` skipped), symlinks
never followed, at most `MAX_DEPTH` levels deep.

**Built** once, at the first look: by `rg --files` when ripgrep is installed, told what the
`grep` tool's ripgrep is told (`moot.workspace.ripgrep.WALK_ARGS`), so both see the same
files; else by the walk. ripgrep names files only: the directories it entered are read off
their paths, and the few it says nothing of (empty, or holding only ignored files) are found by
listing the directories whose link count (two plus their subdirectories, on Linux file systems)
shows a subdirectory not yet known. On 100,000 files in 5,600 directories the build takes about
0.4 s, of which ripgrep 0.25 s.

**Kept fresh** by directories' modification times: adding, removing or renaming an entry
changes its directory's. Each look (`listing`) stats the directories the index holds (one per
~20 files: ~15 ms for 100,000 files) and lists again, through `O_NOFOLLOW` descriptors and
parents first, only the ones whose time changed. A directory whose time is within `RACY_NS`
of the look that listed it is listed again at the next look: a second change in the same tick
of the file system's clock would not show (git calls such entries racy). A `.gitignore` that
changes, comes or goes makes the next look build the index again.

**Hidden paths**: what `Read(...)` deny rules hide is taken out of each listing (a hidden
directory takes everything below it with it), and so are notes naming what lies below one.

No listing is cut silently: `FileListing.notes` says what a listing left out (directories too
deep to enter, a build stopped at the time limit, which the next look builds again).
"""

from __future__ import annotations

import bisect
import os
import stat
import threading
import time
from collections import defaultdict
from pathlib import Path

import msgspec

from moot.workspace.file_listing import FileListing, make_listing
from moot.workspace.ignore import EXCLUDE, IGNORE_FILES, GitIgnore, Hidden
from moot.workspace.no_follow import PathRefused, open_dir_chain
from moot.workspace.ripgrep import list_files
from moot.workspace.walk import MAX_DEPTH, SKIPPED_NAMES, deadline_after, out_of_time, walk

RACY_NS = 2_000_000_000
"""A directory modified this close to (or after) the start of the look that listed it is
listed again at the next look. File systems stamp times from a coarse clock (a few ms on ext4,
2 s on FAT), so a change right after a listing may leave the time as it was."""
RESORT_AT = 1_000
"""More files added and removed at once than this: sort the list again rather than insert
each one."""
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_CLOCK_EVERY = 256
"""Directories between two looks at the clock."""
_FileSignature = tuple[int, int, int, int]
"""An ignore file's `st_mtime_ns`, `st_ctime_ns`, size and inode: what its change changes."""
_Signature = tuple[_FileSignature | None, ...]
"""A directory's ignore files (`IGNORE_FILES`, in order; None for one it has not)."""


class _Directory(msgspec.Struct):
    """What the index holds of one directory it entered."""

    mtime_ns: int
    files: set[str]
    """Names of the files listed in it."""
    subdirs: set[str]
    """Names of the directories below it that the index entered too."""


class FileIndex:
    """The files of one workspace; see the module docstring. Safe to share between threads:
    looks are serialised, and a listing never changes once made."""

    def __init__(self, root: Path, rg: str | None = None) -> None:
        """Args:
        root: The workspace root, free of symlinks.
        rg: The ripgrep executable to build with; None builds with the walk.
        """
        self.root = root
        self._rg = rg
        self._lock = threading.Lock()
        self._stale = True
        """Build at the next look: never built, a `.gitignore` changed, a build stopped early."""
        self._dirs: dict[str, _Directory] = {}
        self._racy: set[str] = set()
        self._ignore_files: dict[str, _Signature] = {}
        """Directory to the status of its ignore files when the index was built."""
        self._exclude: _FileSignature | None = None
        """The status of `.git/info/exclude` when the index was built."""
        self._too_deep: set[str] = set()
        """Directories found `MAX_DEPTH` levels deep, not entered."""
        self._stopped = ""
        """Why the last build stopped early ("" when it did not)."""
        self._sorted: list[str] = []
        self._changes = 0
        self._listing: FileListing | None = None
        self._listing_hidden: Hidden | None = None
        self._ignore = GitIgnore(root)
        self.builds = 0
        """How many times the index was built (a look that only refreshes does not count)."""

    def listing(self, hidden: Hidden | None = None) -> FileListing:
        """The files now: the first look builds the index, later ones list again only the
        directories that changed since.

        Args:
            hidden: What `Read(...)` deny rules hide (`Workspace.hidden`); left out.
        """
        with self._lock:
            if self._stale or self._ignore_files_changed():
                self._build()
            else:
                self._refresh()
            return self._snapshot(hidden)

    # ---- building ------------------------------------------------------------------------------

    def _build(self) -> None:
        started = time.time_ns()
        deadline = deadline_after()
        self._dirs, self._racy, self._ignore_files = {}, set(), {}
        self._exclude = _file_signature(str(self.root / EXCLUDE), None)
        self._too_deep, self._stopped, self._stale = set(), "", False
        self._ignore = GitIgnore(self.root)
        listed = self._ripgrep(deadline) if self._rg is not None else None
        if listed is None:
            self._walk_build(deadline)
        else:
            self._from_paths(listed)
        self._directory_pass(started, deadline, adopt=listed is not None)
        self._sorted = sorted(
            f"{rel}/{name}" if rel else name for rel, d in self._dirs.items() for name in d.files
        )
        self._changes += 1
        self.builds += 1

    def _ripgrep(self, deadline: float) -> list[str] | None:
        """The files `rg --files` lists, or None when it cannot run."""
        assert self._rg is not None
        listed = list_files(self._rg, self.root, deadline)
        if listed is None:
            return None
        if listed[1]:
            self._stop(out_of_time())
        return listed[0]

    def _from_paths(self, listed: list[str]) -> None:
        by_directory: defaultdict[str, set[str]] = defaultdict(set)
        for rel in listed:
            parent, _, name = rel.rpartition("/")
            by_directory[parent].add(name)
        self._dirs[""] = _Directory(0, set(), set())
        for rel, files in by_directory.items():
            entry = self._dirs.get(rel)
            if entry is None:
                entry = self._add_chain(rel)
            entry.files = files

    def _add_chain(self, rel: str) -> _Directory:
        """The directory `rel` and any of its parents not yet held, linked to each other."""
        made = self._dirs[rel] = _Directory(0, set(), set())
        parent, _, name = rel.rpartition("/")
        above = self._dirs.get(parent)
        if above is None:
            above = self._add_chain(parent)
        above.subdirs.add(name)
        return made

    def _walk_build(self, deadline: float) -> None:
        dirs = self._dirs
        dirs[""] = _Directory(0, set(), set())
        found = walk(self.root, self.root, self._ignore, deadline=deadline)
        for entry in found:
            parent, _, name = entry.rel.rpartition("/")
            if entry.is_file:
                dirs[parent].files.add(name)
            elif entry.is_dir and len(entry.parts) >= MAX_DEPTH:
                self._too_deep.add(entry.rel)
            elif entry.is_dir:
                dirs[entry.rel] = _Directory(entry.mtime_ns, set(), set())
                dirs[parent].subdirs.add(name)
        if time.monotonic() >= deadline:
            self._stop(out_of_time())

    def _directory_pass(self, started: int, deadline: float, *, adopt: bool) -> None:
        """Each directory's time and `.gitignore`; with `adopt`, the directories ripgrep
        entered without listing a file there (its link count shows one not yet known)."""
        root_fd = os.open(self.root, _ROOT_FLAGS)
        try:
            for count, rel in enumerate(list(self._dirs)):
                entry = self._dirs.get(rel)
                if entry is None:
                    continue  # dropped with a directory above it
                if count % _CLOCK_EVERY == 0 and time.monotonic() >= deadline:
                    self._stop(out_of_time())
                    return
                try:
                    info = os.stat(rel or ".", dir_fd=root_fd, follow_symlinks=False)
                except OSError:
                    self._drop(rel, [])
                    continue
                if not stat.S_ISDIR(info.st_mode):
                    self._drop(rel, [])
                    continue
                entry.mtime_ns = info.st_mtime_ns
                if info.st_mtime_ns >= started - RACY_NS:
                    self._racy.add(rel)
                self._note_ignore_file(rel, root_fd)
                if adopt and info.st_nlink - 2 != len(entry.subdirs):
                    self._adopt(rel, entry, deadline, started)
        finally:
            os.close(root_fd)

    def _note_ignore_file(self, rel: str, root_fd: int) -> None:
        found = _ignore_signature(rel, root_fd)
        if found is not None:
            self._ignore_files[rel] = found

    def _adopt(self, rel: str, entry: _Directory, deadline: float, started: int) -> None:
        """Enter the subdirectories of `rel` that ripgrep listed no file in, unless ignored."""
        try:
            _, _, subdirs, _ = self._scan(rel)
        except (OSError, PathRefused):
            return  # gone or swapped since: its parent's time tells the next look
        prefix = f"{rel}/" if rel else ""
        for name in sorted(subdirs - entry.subdirs):
            self._enter(prefix + name, [], deadline, started, building=True)

    # ---- keeping fresh -------------------------------------------------------------------------

    def _refresh(self) -> None:
        started = time.time_ns()
        deadline = deadline_after()
        changed: list[str] = []
        root_fd = os.open(self.root, _ROOT_FLAGS)
        try:
            for rel, entry in self._dirs.items():
                try:
                    info = os.stat(rel or ".", dir_fd=root_fd, follow_symlinks=False)
                except OSError:
                    changed.append(rel)
                    continue
                if info.st_mtime_ns != entry.mtime_ns or rel in self._racy:
                    changed.append(rel)
        finally:
            os.close(root_fd)
        if not changed:
            return
        self._racy = set()
        added: list[str] = []
        removed: list[str] = []
        for rel in sorted(changed):  # parents first: a swapped one drops its tree
            if rel in self._dirs:
                self._rescan(rel, started, added, removed, deadline)
            if self._stale:  # a `.gitignore` came or went
                self._build()
                return
        self._apply(added, removed)

    def _rescan(
        self, rel: str, started: int, added: list[str], removed: list[str], deadline: float
    ) -> None:
        try:
            mtime, files, subdirs, ignore_file = self._scan(rel)
        except (OSError, PathRefused):  # gone, or a symlink now: nothing below it is listed
            if rel:
                self._drop(rel, removed)
            else:
                self._stale = True  # the root itself: start again
            return
        if ignore_file != self._ignore_files.get(rel):
            self._stale = True
            return
        entry = self._dirs[rel]
        prefix = f"{rel}/" if rel else ""
        removed += [prefix + name for name in entry.files - files]
        added += [prefix + name for name in files - entry.files]
        for name in entry.subdirs - subdirs:
            self._drop(prefix + name, removed)
        entry.files, entry.mtime_ns = files, mtime
        if mtime >= started - RACY_NS:
            self._racy.add(rel)
        for name in sorted(subdirs - entry.subdirs):
            self._enter(prefix + name, added, deadline, started)

    def _enter(
        self, rel: str, added: list[str], deadline: float, started: int, *, building: bool = False
    ) -> None:
        """Take in the directory `rel`, not held yet, and everything below it (a walk).

        A `.gitignore` found there is taken in while building; afterwards the index was made
        without its rules, so the next look builds again.
        """
        pending = [rel]
        while pending:
            if time.monotonic() >= deadline:
                self._stop(out_of_time())
                return
            current = pending.pop()
            try:
                mtime, files, subdirs, ignore_file = self._scan(current)
            except (OSError, PathRefused):
                continue  # gone, or swapped for a symlink: its parent's time tells
            if ignore_file is not None and building:
                self._ignore_files[current] = ignore_file
            elif ignore_file is not None:
                self._stale = True
            parent, _, name = current.rpartition("/")
            if parent not in self._dirs:
                continue
            self._dirs[parent].subdirs.add(name)
            self._dirs[current] = _Directory(mtime, files, set())
            if mtime >= started - RACY_NS:
                self._racy.add(current)
            added += [f"{current}/{file}" for file in files]
            pending += [f"{current}/{sub}" for sub in sorted(subdirs, reverse=True)]

    def _scan(self, rel: str) -> tuple[int, set[str], set[str], _Signature | None]:
        """List the directory `rel` through `O_NOFOLLOW` descriptors, as a walk would.

        Returns:
            Its modification time, the names of its files and of its subdirectories that are
            not ignored (those too deep to enter left out, and noted), and the status of its
            `.gitignore` (None without one).

        Raises:
            OSError, PathRefused: Gone, not a directory, or a symlink on the way.
        """
        parts = tuple(rel.split("/")) if rel else ()
        fd = open_dir_chain(self.root, parts)
        try:  # open while the entries are read: their `stat` is relative to it
            return self._entries(parts, fd)
        finally:
            os.close(fd)

    def _entries(
        self, parts: tuple[str, ...], fd: int
    ) -> tuple[int, set[str], set[str], _Signature | None]:
        mtime = os.fstat(fd).st_mtime_ns
        with os.scandir(fd) as scan:
            items = list(scan)
        files: set[str] = set()
        subdirs: set[str] = set()
        ignore_files: dict[str, _FileSignature] = {}
        ignored = self._ignore.ignored
        for item in items:
            name = item.name
            if name in SKIPPED_NAMES:
                continue
            try:
                is_file = item.is_file(follow_symlinks=False)
                is_dir = not is_file and item.is_dir(follow_symlinks=False)
            except OSError:
                continue
            child = (*parts, name)
            if is_file:
                if name in IGNORE_FILES:
                    try:
                        ignore_files[name] = _signature(item.stat(follow_symlinks=False))
                    except OSError:
                        continue
                if not ignored(child, False):
                    files.add(name)
            elif is_dir and not ignored(child, True):
                if len(child) >= MAX_DEPTH:
                    self._too_deep.add("/".join(child))
                else:
                    subdirs.add(name)
        found = tuple(ignore_files.get(name) for name in IGNORE_FILES) if ignore_files else None
        return mtime, files, subdirs, found

    def _drop(self, rel: str, removed: list[str]) -> None:
        """Forget the directory `rel` and everything below it; their files go to `removed`."""
        entry = self._dirs.pop(rel, None)
        if entry is None:
            return
        prefix = f"{rel}/" if rel else ""
        removed += [prefix + name for name in entry.files]
        for name in entry.subdirs:
            self._drop(prefix + name, removed)
        self._racy.discard(rel)
        self._ignore_files.pop(rel, None)
        self._too_deep = {d for d in self._too_deep if not d.startswith(prefix)}
        parent, _, name = rel.rpartition("/")
        if parent in self._dirs:
            self._dirs[parent].subdirs.discard(name)

    def _apply(self, added: list[str], removed: list[str]) -> None:
        if not added and not removed:
            return
        if len(added) + len(removed) > RESORT_AT:
            gone = set(removed)
            kept = [rel for rel in self._sorted if rel not in gone]
            self._sorted = sorted(kept + added)
        else:
            for rel in removed:
                at = bisect.bisect_left(self._sorted, rel)
                if at < len(self._sorted) and self._sorted[at] == rel:
                    del self._sorted[at]
            for rel in added:
                bisect.insort(self._sorted, rel)
        self._changes += 1

    def _ignore_files_changed(self) -> bool:
        root_fd = os.open(self.root, _ROOT_FLAGS)
        try:
            if _file_signature(EXCLUDE, root_fd) != self._exclude:
                return True
            return any(
                _ignore_signature(rel, root_fd) != seen for rel, seen in self._ignore_files.items()
            )
        finally:
            os.close(root_fd)

    def _stop(self, why: str) -> None:
        """The build stopped early: say so in every listing until the next look builds again."""
        self._stopped = self._stopped or why
        self._stale = True

    # ---- listing -------------------------------------------------------------------------------

    def _snapshot(self, hidden: Hidden | None) -> FileListing:
        cached = self._listing
        if (
            cached is not None
            and cached.version == self._changes
            and self._listing_hidden is hidden
        ):
            return cached
        self._listing = make_listing(
            self._sorted, self._dirs, self._too_deep, self._stopped, self._changes, hidden
        )
        self._listing_hidden = hidden
        return self._listing


def _signature(info: os.stat_result) -> _FileSignature:
    """What changes when a file is changed or replaced."""
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)


def _file_signature(rel: str, root_fd: int | None) -> _FileSignature | None:
    """The signature of the regular file `rel` (below the root `root_fd` opens; None: the
    current directory is the root), None when there is none."""
    try:
        info = os.stat(rel, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return None
    return _signature(info) if stat.S_ISREG(info.st_mode) else None


def _ignore_signature(rel: str, root_fd: int) -> _Signature | None:
    """The signatures of the ignore files of the directory `rel`; None when it has none."""
    prefix = f"{rel}/" if rel else ""
    found = tuple(_file_signature(prefix + name, root_fd) for name in IGNORE_FILES)
    return found if any(found) else None
