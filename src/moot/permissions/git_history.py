"""Whether git's object store holds what the `Read(...)` deny rules hide (see `tracked`).

A file committed once and untracked since, or deleted, is still in git's objects: `git log -p
--all` in the sandbox prints it. So is one in a stash (`refs/stash` and its reflog), in a
commit only the reflog still names (after a reset), in a stash that was dropped, or in a pack.
`HistoryCache.exposes` answers whether any of that holds a covered path, looking at every
commit in the object store, reachable or not: `git cat-file --batch-all-objects` lists them
(packed, loose and in alternates), and `git log --no-walk --name-only` names each one's paths
against its first parent, so every path any commit's tree holds is named by some commit
(a shallow clone's boundary commits show their whole tree). Each path and the directories
above it are matched with the rules' own matcher.

A blob that no commit names (a file added to the index, then reset) has no path: for that,
the current content of each hidden file is hashed as git would and looked up in the store.
An older content that only such a blob holds is not found, nor the content of a file in a
hidden directory (those are not listed).

The answer is kept while nothing that git changes as it adds objects has changed: the index,
`HEAD` and its reflog, `ORIG_HEAD`, `FETCH_HEAD`, `packed-refs`, the directories of branches,
tags and remotes, `refs/stash` and its reflog, the object and pack directories and
`info/alternates` (about 20 `stat`s). Objects written with plumbing alone (`git hash-object
-w`, `commit-tree` with no ref moved) are not noticed until one of those changes; commands
in the sandbox cannot write `.git` at all. Commits already looked at are remembered, so after
a commit only the new ones are read; the listing of commit ids costs ~0.5 s in a store of
480,000 objects (numpy), the names of all 75,000 commits ~5 s once. A store that changed in
the last `RACY_NS` is looked at again next time, as `masks` does with directories. Whatever
fails (git missing, a timeout, a store it cannot read) counts as exposed: fail closed.

git runs with no fsmonitor, no external diff, textconv or signature check, no lazy fetch
from a promisor remote, and none of moot's `GIT_*` variables: nothing a repository's config
names runs, and nothing leaves the machine.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Callable

import msgspec

from moot.paths import host_search_path
from moot.workspace.git_config import small_file

GIT_TIMEOUT = 10.0
"""Seconds each git command may take; beyond that the store counts as exposing."""
RACY_NS = 2_000_000_000
"""A store changed this recently (ns) may change again in the same timestamp tick."""
MAX_CONTENT_BYTES = 64 * 1024 * 1024
"""Larger hidden files are not hashed (their content is not looked up)."""

Covers = Callable[[str, bool], bool]
"""Whether the `Read(...)` deny rules cover a workspace path (`rel`, `is_dir`)."""


class GitStore(msgspec.Struct, frozen=True):
    """Where a workspace's repository keeps its objects."""

    git_dir: str
    common_dir: str
    """The worktree's main `.git` for a linked worktree; else `git_dir`."""

    @property
    def objects(self) -> str:
        return f"{self.common_dir}/objects"


def find_store(base: str) -> GitStore | None:
    """The repository whose `.git` is at the workspace root `base`: a directory, a symlink to
    one, or a `gitdir:` file (a linked worktree, a submodule); None when it cannot be read."""
    dot_git = f"{base}/.git"
    if os.path.isdir(dot_git):
        git_dir = os.path.realpath(dot_git)
    else:
        # Bounded, plain files only: a repository's `.git` may be a FIFO or a link to /dev/zero.
        text = small_file(dot_git)
        line = "" if text is None else text.split("\n", 1)[0].strip()
        if not line.startswith("gitdir:"):
            return None
        git_dir = os.path.realpath(os.path.join(base, line.removeprefix("gitdir:").strip()))
    common = git_dir
    if os.path.lexists(f"{git_dir}/commondir"):
        named = small_file(f"{git_dir}/commondir")
        if named is None:
            return None
        common = os.path.realpath(os.path.join(git_dir, named.strip()))
    return GitStore(git_dir, common)


class HistoryCache:
    """What a session learnt of one store: commits read, the paths they name, the last
    answer and what it was given (see the module docstring). Not thread-safe: a session's
    mask source calls it under its lock."""

    def __init__(self) -> None:
        self.store: GitStore | None = None
        self.seen: set[str] = set()
        self.paths: set[str] = set()
        self._state: tuple[object, ...] | None = None
        """The store's state when `seen` was last brought up to date (None: never, or racy)."""
        self._last: tuple[tuple[object, ...], bool] | None = None

    def exposes(
        self,
        store: GitStore,
        covers: Covers,
        rules_key: tuple[object, ...],
        hidden_files: list[str],
        *,
        clock: Callable[[], int] = time.time_ns,
    ) -> bool:
        """Whether a commit in `store` names a path `covers` says yes to, or the store holds
        the content of a file in `hidden_files` (absolute real paths); True when that cannot
        be told."""
        if store != self.store:  # another repository: nothing learnt holds
            self.store, self.seen, self.paths, self._state, self._last = (
                store,
                set(),
                set(),
                None,
                None,
            )
        state = _store_state(store, clock() - RACY_NS)
        files = _content_files(hidden_files)
        key = (state, rules_key, tuple(files))
        if state is not None and self._last is not None and self._last[0] == key:
            return self._last[1]
        exposed = self._history_exposes(store, state, covers) or _contents_stored(store, files)
        self._last = (key, exposed) if state is not None else None
        return exposed

    def _history_exposes(
        self, store: GitStore, state: tuple[object, ...] | None, covers: Covers
    ) -> bool:
        if state is None or state != self._state:
            commits = _commits(store)
            if commits is None:
                return True
            new = commits - self.seen
            if new:
                paths = _paths_of(store, new)
                if paths is None:
                    return True
                self.paths |= paths
                self.seen |= new
            self._state = state
        return _any_covered(self.paths, covers)


def _any_covered(paths: set[str], covers: Covers) -> bool:
    dirs: set[str] = set()
    for path in paths:
        if covers(path, False):
            return True
        parent = os.path.dirname(path)
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = os.path.dirname(parent)
    return any(covers(directory, True) for directory in dirs)


_OWN = ("index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "logs/HEAD")
"""What a worktree's own git directory holds that a new object comes with."""
_SHARED = (
    "packed-refs", "refs/heads", "refs/tags", "refs/remotes", "refs/stash", "logs/refs/stash",
    "objects", "objects/pack", "objects/info/alternates",
)  # fmt: skip
"""What the common git directory holds that a new object comes with."""


def _store_state(store: GitStore, since: int) -> tuple[object, ...] | None:
    """What changes when objects come into the store, as git adds them (a commit moves HEAD
    and its reflog, a stash `refs/stash` and its reflog, staging the index, a fetch
    `FETCH_HEAD` and the remotes' refs, a clone or `gc` the packs); None when one of those
    changed since `since` (it may change again within the same tick)."""
    paths = [f"{store.git_dir}/{name}" for name in _OWN]
    paths += [f"{store.common_dir}/{name}" for name in _SHARED]
    try:
        remotes = os.listdir(f"{store.common_dir}/refs/remotes")
    except OSError:
        remotes = []
    paths += [f"{store.common_dir}/refs/remotes/{name}" for name in sorted(remotes)]
    parts: list[tuple[object, ...]] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            parts.append((path,))
            continue
        if max(info.st_mtime_ns, info.st_ctime_ns) >= since:
            return None
        parts.append((path, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
    return tuple(parts)


def _git(store: GitStore, *args: str, stdin: bytes = b"") -> bytes | None:
    """git's output for `args` on `store`; None when it failed or took too long."""
    argv = ["git", "-c", "core.fsmonitor=false", f"--git-dir={store.git_dir}", *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_NO_LAZY_FETCH"] = "1"  # a partial clone must not fetch what it lacks
    env["PATH"] = host_search_path((os.path.dirname(store.git_dir), os.getcwd()))
    try:
        done = subprocess.run(
            argv, input=stdin, capture_output=True, env=env, timeout=GIT_TIMEOUT, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _commits(store: GitStore) -> set[str] | None:
    """Every commit in the store, reachable or not."""
    out = _git(
        store, "cat-file", "--batch-all-objects", "--unordered",
        "--batch-check=%(objecttype) %(objectname)",
    )  # fmt: skip
    if out is None:
        return None
    return {
        line[7:] for line in out.decode("ascii", "replace").splitlines() if line[:7] == "commit "
    }


def _paths_of(store: GitStore, commits: set[str]) -> set[str] | None:
    """The paths the commits change against their first parents (all of a root's)."""
    out = _git(
        store, "log", "--stdin", "--no-walk=unsorted", "--name-only", "-z", "--format=",
        "--no-renames", "--diff-merges=first-parent", "--no-ext-diff", "--no-textconv",
        "--no-show-signature", "--no-mailmap",
        stdin="\n".join(commits).encode() + b"\n",
    )  # fmt: skip
    if out is None:
        return None
    return {name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name.strip()}


def _content_files(hidden: list[str]) -> list[tuple[str, int, int, int]]:
    """The hidden files to look up by content, with what tells a changed one (size, inode,
    mtime); not the files of hidden directories (listing them before every command would
    cost what hiding them whole saves), nor one larger than `MAX_CONTENT_BYTES`."""
    found: list[tuple[str, int, int, int]] = []
    for path in hidden:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_CONTENT_BYTES:
            found.append((path, info.st_size, info.st_ino, info.st_mtime_ns))
    return sorted(found)


def _contents_stored(store: GitStore, files: list[tuple[str, int, int, int]]) -> bool:
    """Whether the store holds a blob of any file's current content."""
    if not files:
        return False
    algorithm = _object_format(store)
    ids = []
    for path, *_ in files:
        try:
            with open(path, "rb") as file:
                data = file.read(MAX_CONTENT_BYTES + 1)
        except OSError:
            continue
        ids.append(hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest())
    if not ids:
        return False
    out = _git(store, "cat-file", "--batch-check=%(objectname)", stdin="\n".join(ids).encode())
    if out is None:
        return True
    return any(not line.endswith(b" missing") for line in out.splitlines() if line.strip())


def _object_format(store: GitStore) -> str:
    """ "sha256" for a repository made with `--object-format=sha256`, else "sha1"."""
    config = (small_file(f"{store.common_dir}/config", 1 << 20) or "").lower()
    return "sha256" if "objectformat = sha256" in config.replace("\t", " ") else "sha1"
