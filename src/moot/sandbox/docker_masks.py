"""What the Docker sandbox's container masks, and how a stale mask is told: each path the
container mounts over (masked by deny rules, guarded against renames, protected) with its
identity when the container was made (`mask_ids`). Mounts are fixed when a container is made,
so a path that appeared or was replaced since needs a new container (see `docker`)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import msgspec

from moot.sandbox import docker_image
from moot.sandbox.base import SandboxMasks

MaskId = tuple[str, str, int, int, int]
"""A masked, guarded or protected path as the container has it: (kind, workspace path, device,
inode, ctime in ns or 0)."""


class ContainerMasks(msgspec.Struct, frozen=True):
    """What deny rules cover now, with the identity of each path the container mounts."""

    masks: SandboxMasks
    ids: frozenset[MaskId]


def mask_ids(
    workspace: Path,
    masks: SandboxMasks,
    protected: tuple[str, ...] = (),
    *,
    steady: tuple[str, ...] = (),
) -> frozenset[MaskId]:
    """Each path the container mounts that exists, with what tells a replaced one from the one
    mounted: device and inode, and for a masked path the ctime (a new file may reuse an inode).

    Guarded and protected directories (`docker_image.guard_paths`, `protected_paths`) go
    without it, and so does a hidden `.git` (`moot.permissions.masks` hides it when git tracks
    a hidden file): a directory's ctime changes with every file made in it, and a git command
    on the host writes in `.git` each time; so do moot's own directories hidden in the
    workspace (`steady`: SQLite makes and removes files in the data directory as it writes).
    A directory removed on the host and made again
    with the same inode number goes unnoticed; only the host can do that (in the container
    each is a mount point).
    """
    ids: set[MaskId] = set()
    mounted = docker_image.protected_paths(workspace, protected)
    for path in [*mounted, *docker_image.guard_paths(workspace, masks, mounted)]:
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            rel = str(path.relative_to(workspace))
            kind = "protected" if path in mounted else "guard"
            ids.add((kind, rel, info.st_dev, info.st_ino, 0))
    kinds = [("read_only", masks.read_only), ("file", masks.hidden_files)]
    for kind, paths in [*kinds, ("dir", masks.hidden_dirs)]:
        for rel in paths:
            if rel.startswith("/"):
                continue  # outside the workspace: not mounted, nothing to mask
            try:
                info = os.lstat(workspace / rel)
            except OSError:
                continue
            ctime = 0 if rel == ".git" or rel in steady else info.st_ctime_ns
            ids.add((kind, rel, info.st_dev, info.st_ino, ctime))
    return frozenset(ids)
