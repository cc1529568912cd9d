"""Hiding `.git` when git would show what the `Read(...)` deny rules hide.

A `Read(...)` mask empties a file inside the sandbox, but git still knows it: `git diff` shows
each of its lines as deleted, `git show HEAD:.env` reads it from the object store, and `git log
-p --all` prints it from any commit that ever held it. So `.git` is hidden (an empty read-only
directory, in which git inside the sandbox finds no repository) whenever

- the index tracks a hidden file, or a file under a hidden directory (`git ls-files`); or
- any commit in the object store, reachable or not (branches, tags, remotes, stashes, reflogs,
  dropped stashes; packed or loose), names a path the rules cover, or the store holds the
  current content of a hidden file (`git_history.HistoryCache`): a secret committed once and
  deleted or untracked since, which no file in the workspace shows any more.

Otherwise `.git` stays as it was (read-only, `SandboxPolicy.protected`) and git works. For a
linked worktree or a submodule, whose `.git` is a file naming a directory elsewhere, that
directory and the repository's common one are hidden too (bubblewrap shows the host's files).

The index is asked with `git -C <root> ls-files -z -- :(literal)<path>...` (fsmonitor off:
a repository's config names no program that runs here), only when something is hidden and
the root holds a `.git`: about 2 ms. A session's `TrackedCache` keeps the answer while the
index file (device, inode, size, mtime, ctime) and the hidden paths stay the same, and the
history's while the object store is unchanged, so most commands pay a few `stat`s. When git
cannot answer (not installed, no repository it can read, a timeout), `.git` is hidden: it
fails closed.

Submodules' indexes are asked too (`--recurse-submodules`), and the `.git` of any repository
nested in the workspace above a hidden path is hidden whenever it exists.

What it does not contain: a repository whose `.git` lies above the workspace (bubblewrap shows
the host's files; it is not looked at); the history of a submodule or a nested repository
(only their indexes); an older content of a hidden file that only a blob no commit names holds.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

from moot.paths import host_search_path
from moot.permissions.git_history import Covers, GitStore, HistoryCache, find_store
from moot.sandbox.base import SandboxMasks

GIT_TIMEOUT = 10.0
"""Seconds `git ls-files` may take before `.git` is hidden without its answer."""


class TrackedCache:
    """The last answer about one workspace's index, and what it was asked with, and what was
    learnt of its history (a session's `mask_source` holds one; threads may share the index
    answer: the pair is replaced whole; the history is asked under the source's lock)."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        """Args:
        clock: The time now in ns since the epoch, as file timestamps count it.
        """
        self.last: tuple[tuple[Any, ...], bool] | None = None
        self.history = HistoryCache()
        self.clock = clock


def hide_git_if_tracked(
    masks: SandboxMasks,
    base: str,
    cache: TrackedCache | None = None,
    covers: Covers | None = None,
    rules_key: tuple[object, ...] = (),
) -> SandboxMasks:
    """`masks`, with `.git` hidden too when git would show what the rules hide (see above).

    Args:
        masks: What the deny rules mask, workspace-relative.
        base: The workspace root, a real path.
        cache: Where the last answers are kept; None asks git each time.
        covers: Whether the `Read(...)` deny rules cover a workspace path; None when there
            are none (then only the index is asked about what `masks` hides).
        rules_key: What `covers` answers from: a new key asks the history again.

    Returns:
        `masks` itself when git shows nothing hidden (or there is no `.git`); else new masks
        with `.git` (and the store of a linked worktree) hidden and nothing masked below it.
    """
    hidden = [p for p in (*masks.hidden_files, *masks.hidden_dirs) if not p.startswith("/")]
    masks = _with_nested_gits_hidden(masks, base, hidden)
    if ".git" in hidden or not os.path.lexists(f"{base}/.git"):
        return masks
    if not hidden and covers is None:
        return masks
    if hidden and _index_tracks(base, hidden, cache):
        return _with_git_hidden(masks, base)
    if covers is None:
        return masks
    store = find_store(base)
    if store is None:
        return _with_git_hidden(masks, base)  # a `.git` nobody can read: fail closed
    history = cache.history if cache is not None else HistoryCache()
    paths = [
        p if p.startswith("/") else f"{base}/{p}" for p in (*masks.hidden_files, *masks.hidden_dirs)
    ]
    clock = cache.clock if cache is not None else time.time_ns
    if history.exposes(store, covers, rules_key, paths, clock=clock):
        return _with_git_hidden(masks, base, store)
    return masks


def _index_tracks(base: str, hidden: list[str], cache: TrackedCache | None) -> bool:
    """Whether the index tracks a hidden path; the answer kept in `cache` while the index
    file and the paths are the same."""
    key = _index_key(base, hidden) if cache is not None else None
    last = cache.last if cache is not None else None
    if key is not None and last is not None and last[0] == key:
        return last[1]
    tracked = git_tracks_any(base, hidden)
    if cache is not None and key is not None:
        cache.last = (key, tracked)
    return tracked


def _index_key(base: str, hidden: list[str]) -> tuple[Any, ...] | None:
    """What the answer depends on: the index file as it is now, and the paths asked about;
    None when there is no index file of its own to tell by (a worktree's `.git` file)."""
    try:
        info = os.lstat(f"{base}/.git/index")
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, *hidden)


def git_tracks_any(base: str, paths: list[str]) -> bool:
    """Whether the index of the repository at `base` tracks any of `paths` (files, or files
    below directories); True when git cannot tell."""
    specs = [f":(literal){path}" for path in paths]
    # --recurse-submodules: a submodule's own objects would show its hidden files just the same.
    argv = ["git", "-c", "core.fsmonitor=false", "-C", base, "ls-files", "-z",
            "--recurse-submodules", "--", *specs]  # fmt: skip
    # Without GIT_DIR and the like from moot's environment: the repository at `base` is meant.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["PATH"] = host_search_path((base,))  # the person's git, not one the workspace ships
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=GIT_TIMEOUT
        )
    except (OSError, subprocess.SubprocessError):
        return True
    return done.returncode != 0 or bool(done.stdout)


def _with_nested_gits_hidden(masks: SandboxMasks, base: str, hidden: list[str]) -> SandboxMasks:
    """`masks`, with the `.git` of every repository nested in the workspace above a hidden
    path hidden too (a nested repository or a submodule's work tree): its objects would show
    the hidden file. Only a few `lstat` calls: the directories above each hidden path."""
    nested: set[str] = set()
    for path in hidden:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            git = "/".join([*parts[:depth], ".git"])
            if git not in nested and os.path.lexists(f"{base}/{git}"):
                nested.add(git)
    if not nested:
        return masks
    dirs = {g for g in nested if os.path.isdir(f"{base}/{g}") and not os.path.islink(f"{base}/{g}")}
    files = nested - dirs

    def outside(p: str) -> bool:
        return not any(p == d or p.startswith(d + "/") for d in dirs)

    return SandboxMasks(
        tuple(sorted({*(p for p in masks.hidden_files if outside(p)), *files})),
        tuple(sorted({*(p for p in masks.hidden_dirs if outside(p)), *dirs})),
        tuple(p for p in masks.read_only if outside(p)),
    )


def _with_git_hidden(masks: SandboxMasks, base: str, store: GitStore | None = None) -> SandboxMasks:
    """`masks` with `.git` hidden, and the directories of `store` (a linked worktree's, or a
    submodule's, lie elsewhere: `.git` is then only a file naming them)."""
    path = f"{base}/.git"
    targets: list[tuple[str, bool]] = []
    if os.path.islink(path):  # hide what it leads to, as for any denied link
        targets.append((os.path.realpath(path), os.path.isdir(path)))
    elif os.path.lexists(path):
        targets.append((path, os.path.isdir(path)))
    if store is not None:
        targets += [(store.git_dir, True), (store.common_dir, True)]
    for real, as_dir in targets:
        if real == base or base.startswith(real.rstrip("/") + "/") or not os.path.exists(real):
            continue  # never the workspace or what holds it
        masks = _hide(masks, real[len(base) + 1 :] if real.startswith(base + "/") else real, as_dir)
    return masks


def _hide(masks: SandboxMasks, git: str, as_dir: bool) -> SandboxMasks:
    def outside(p: str) -> bool:
        return not as_dir or (p != git and not p.startswith(git + "/"))

    files = [p for p in masks.hidden_files if outside(p)]
    dirs = [p for p in masks.hidden_dirs if outside(p)]
    if any(git == d or git.startswith(d + "/") for d in dirs):
        return masks  # hidden already, within a hidden directory
    (dirs if as_dir else files).append(git)
    read_only = tuple(p for p in masks.read_only if p != git and outside(p))
    return SandboxMasks(tuple(sorted(set(files))), tuple(sorted(set(dirs))), read_only)
