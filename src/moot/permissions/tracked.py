"""Hiding `.git` when git would show a hidden file: the index tracks it.

A `Read(...)` mask empties a file inside the sandbox, but git still knows it: `git diff` shows
each of its lines as deleted, and `git show HEAD:.env` reads it from the object store. So when
the repository's index tracks a hidden file, or a file under a hidden directory, `.git` is
hidden too (`hide_git_if_tracked`, which `masks.sandbox_masks` calls): an empty read-only
directory, in which git inside the sandbox finds no repository. When nothing hidden is
tracked, `.git` stays as it was (read-only, `SandboxPolicy.protected`) and git works.

The index is asked with `git -C <root> ls-files -z -- :(literal)<path>...` (fsmonitor off:
a repository's config names no program that runs here), only when something is hidden and
the root holds a `.git`: about 2 ms. A session's `TrackedCache` keeps the answer while the
index file (device, inode, size, mtime, ctime) and the hidden paths stay the same, so most
commands pay one `stat`. When git cannot answer (not installed, no repository it can read,
a timeout), `.git` is hidden: it fails closed.

Submodules are asked too (`--recurse-submodules`), and the `.git` of any repository nested in
the workspace above a hidden path is hidden whenever it exists.

What it does not contain: a denied file that git has only in its history (committed once,
untracked since) leaves `.git` visible, and `git log -p` prints it; so does a repository whose
`.git` lies above the workspace (bubblewrap shows the host's files; it is not looked at).
"""

from __future__ import annotations

import os
import subprocess
from typing import Any

from moot.sandbox.base import SandboxMasks

GIT_TIMEOUT = 10.0
"""Seconds `git ls-files` may take before `.git` is hidden without its answer."""


class TrackedCache:
    """The last answer about one workspace's index, and what it was asked with (a session's
    `mask_source` holds one; threads may share it: the pair is replaced whole)."""

    def __init__(self) -> None:
        self.last: tuple[tuple[Any, ...], bool] | None = None


def hide_git_if_tracked(
    masks: SandboxMasks, base: str, cache: TrackedCache | None = None
) -> SandboxMasks:
    """`masks`, with `.git` hidden too when its index tracks a hidden path (see above).

    Args:
        masks: What the deny rules mask, workspace-relative.
        base: The workspace root, a real path.
        cache: Where the last answer is kept; None asks git each time.

    Returns:
        `masks` itself when nothing hidden is tracked (or nothing is hidden, or there is no
        `.git`); else new masks with `.git` hidden and nothing masked below it.
    """
    hidden = [p for p in (*masks.hidden_files, *masks.hidden_dirs) if not p.startswith("/")]
    masks = _with_nested_gits_hidden(masks, base, hidden)
    if not hidden or ".git" in hidden or not os.path.lexists(f"{base}/.git"):
        return masks
    key = _index_key(base, hidden) if cache is not None else None
    last = cache.last if cache is not None else None
    if key is not None and last is not None and last[0] == key:
        tracked = last[1]
    else:
        tracked = git_tracks_any(base, hidden)
        if cache is not None and key is not None:
            cache.last = (key, tracked)
    return _with_git_hidden(masks, base) if tracked else masks


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


def _with_git_hidden(masks: SandboxMasks, base: str) -> SandboxMasks:
    path = f"{base}/.git"
    if os.path.islink(path):  # hide what it leads to, as for any denied link
        real = os.path.realpath(path)
        if real == base or base.startswith(real.rstrip("/") + "/") or not os.path.exists(real):
            return masks
        git = real[len(base) + 1 :] if real.startswith(base + "/") else real
    else:
        git = ".git"
    as_dir = os.path.isdir(path)

    def outside(p: str) -> bool:
        return not as_dir or (p != git and not p.startswith(git + "/"))

    files = [p for p in masks.hidden_files if outside(p)]
    dirs = [p for p in masks.hidden_dirs if outside(p)]
    (dirs if as_dir else files).append(git)
    read_only = tuple(p for p in masks.read_only if p != git and outside(p))
    return SandboxMasks(tuple(sorted(files)), tuple(sorted(dirs)), read_only)
