"""Paths that must not come into being from the sandbox, though nothing is there to protect.

The git config can name a hooks directory that does not exist yet (`core.hooksPath=.husky`
with no `.husky`), or an include or a config file that does not: whatever a command puts there
runs on the host, in the next session that allows hooks and in the person's own `git commit`.
A path that exists is bound read-only in the sandbox, but a mount needs something to mount
on, and moot makes nothing in the project unasked; a read-only parent would take the whole
directory (often the workspace itself) with it.

So `AbsentPaths` keeps such paths (the first missing part of each, `moot.workspace.host_git.
absent_paths`) out of the workspace after the fact: the sandbox `sweep`s before each command,
after each command it ran in the foreground, and as it closes (after its background commands
are killed); whatever stands at a path then (a file, a directory, a symlink) is moved into
the quarantine directory, outside the workspace (deleted where it cannot be moved there: on
another file system), and the command's result says so. A file tool's write there, which only
the person's approval lets through (`protected_files`), first sweeps, then `release`s the
path: it then exists, and is protected like any hooks directory.

What it does not stop: a background command that makes such a path between two commands;
it stays until the next command, the session's end or the next sweep, and the person's own
git run meanwhile runs it.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterable
from pathlib import Path


class AbsentPaths:
    """Workspace paths no command may make (see the module docstring). Thread-safe: the
    sandbox sweeps from worker threads."""

    def __init__(self, root: Path, paths: Iterable[str], quarantine: Path) -> None:
        """Args:
        root: The workspace root, a real path.
        paths: Workspace-relative paths, each missing now.
        quarantine: Where what appears is moved, outside the workspace (made when needed).
        """
        self.root = root
        self.quarantine = quarantine
        self._paths = tuple(dict.fromkeys(paths))
        self._lock = threading.Lock()
        self._count = 0

    def __bool__(self) -> bool:
        return bool(self._paths)

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths still kept absent."""
        return self._paths

    def sweep(self) -> list[str]:
        """Move away whatever stands at the paths now; what was done, one line each (for a
        command's result), empty when nothing was there. Never raises."""
        with self._lock:
            return [said for rel in self._paths if (said := self._away(rel))]

    def release(self, target: Path) -> list[str]:
        """Let a file tool's approved write make `target`: sweep first (what a command put
        there is not the person's to approve), then stop keeping the paths at or above it
        absent."""
        done = self.sweep()
        try:
            rel = target.relative_to(self.root).as_posix()
        except ValueError:
            return done
        with self._lock:
            self._paths = tuple(p for p in self._paths if not (rel == p or rel.startswith(p + "/")))
        return done

    def _away(self, rel: str) -> str:
        path = self.root / rel
        if not os.path.lexists(path):
            return ""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self._count += 1
        where = self.quarantine / f"{stamp}-{self._count}" / rel
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            os.rename(path, where)  # a symlink is moved, never followed
        except OSError:  # another file system, say: it must not stay all the same
            return self._remove(rel, path)
        return f"{self._why(rel)}; moot moved it out of the workspace, to {where}"

    def _remove(self, rel: str, path: Path) -> str:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:
            return ""
        except OSError as exc:
            return f"{self._why(rel)}, and moot could not remove it: {exc}"
        return f"{self._why(rel)}; moot removed it"

    @staticmethod
    def _why(rel: str) -> str:
        return (
            f"{rel} was made, which no command may make: the git config names it (a hooks"
            " directory or a config file), and git on the host would run what it holds"
        )
