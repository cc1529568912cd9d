"""What the sandbox masks in the directories added beside the workspace (`--add-dir`).

bubblewrap binds each added directory writable at its own path, so a deny rule that covers a
file there (`Read(//home/me/other/secret)`, or a floating `Read(.env)`) must be masked there
too, or `cat` in a shell command would show what the file tools refuse. Each added directory
is walked as the workspace is (`moot.permissions.masks.CachedMaskSource`, relative rules
hanging from the workspace root), and what it finds joins the workspace's masks as absolute
paths, which the backend mounts at their own place (`SandboxMasks` allows absolute paths).

Left out, since another walk or nothing needs them: an added directory inside the workspace
(the workspace's walk covers it), a path at or below the workspace (likewise, when an added
directory holds the workspace), and a path at or above the workspace or an added directory (a
mask there would take what it holds with it: the workspace's walk never masks its own root).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from moot.permissions.masks import CachedMaskSource
from moot.permissions.rules import RuleSet
from moot.sandbox.base import MaskSource, SandboxMasks


def with_added_roots(
    source: MaskSource | None, rules: RuleSet, workspace: Path, added: Sequence[Path]
) -> MaskSource | None:
    """The workspace's mask source with each added directory's masks joined to it.

    Args:
        source: The workspace's mask source (`mask_source`); None when no rule names a
            path, and then none is needed for the added directories either.
        rules: The rules in force.
        workspace: The workspace root.
        added: The added directories, real paths.
    """
    root = os.path.realpath(workspace)
    outside = [Path(a) for a in added if not _at_or_below(str(a), root)]
    if source is None or not outside:
        return source
    walks = [(str(a), CachedMaskSource(rules, a, workspace_root=Path(root))) for a in outside]
    return _WithAdded(source, walks, (root, *map(str, outside)))


class _WithAdded:
    """A `MaskSource`: the workspace's masks, then each added directory's, absolute."""

    def __init__(
        self, source: MaskSource, walks: list[tuple[str, CachedMaskSource]], roots: tuple[str, ...]
    ) -> None:
        self._source = source
        self._walks = walks
        self._workspace = roots[0]
        self._roots = roots

    def __call__(self) -> SandboxMasks:
        masks = self._source()
        files, dirs = set(masks.hidden_files), set(masks.hidden_dirs)
        read_only = set(masks.read_only)
        for root, walk in self._walks:
            found = walk()
            for paths, into in (
                (found.hidden_files, files),
                (found.hidden_dirs, dirs),
                (found.read_only, read_only),
            ):
                into.update(p for p in (_absolute(root, rel) for rel in paths) if self._kept(p))
        return SandboxMasks(tuple(sorted(files)), tuple(sorted(dirs)), tuple(sorted(read_only)))

    def _kept(self, path: str) -> bool:
        if _at_or_below(path, self._workspace):
            return False  # the workspace's own walk masks what lies there
        return not any(_at_or_below(root, path) for root in self._roots)


def _absolute(root: str, rel: str) -> str:
    """A mask from an added directory's walk (relative to it, or absolute: a link's target)."""
    return rel if rel.startswith("/") else f"{root}/{rel}"


def _at_or_below(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")
