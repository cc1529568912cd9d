"""`with_added_roots`: the sandbox's masks in the added directories (`--add-dir`), absolute,
relative rules hanging from the workspace; never a mask that would take the workspace or an
added directory with it."""

from __future__ import annotations

import os
from pathlib import Path

from moot.client.rules import masks_for
from moot.permissions.rules import RuleSet


def test_an_added_directorys_masks_are_absolute_beside_the_workspaces(tmp_path: Path) -> None:
    root, other = tmp_path / "ws", tmp_path / "other"
    (root / "src").mkdir(parents=True)
    (other / "src").mkdir(parents=True)
    for place in (root, other):
        (place / ".env").write_text("x")
        (place / "src" / "a.py").write_text("x")
    real = os.path.realpath(other)
    rules = RuleSet(deny=["Read(.env)", "Edit(src/**)", f"Edit(/{real}/src/a.py)"])

    source = masks_for(rules, root, (Path(real),))
    assert source is not None
    masks = source()

    assert sorted(masks.hidden_files) == sorted([f"{real}/.env", ".env"])
    # `src/**` is the workspace's src: relative rules hang from the workspace root.
    assert sorted(masks.read_only) == sorted([f"{real}/src/a.py", "src"])


def test_nothing_at_or_above_the_workspace_or_an_added_directory_is_masked(
    tmp_path: Path,
) -> None:
    top = Path(os.path.realpath(tmp_path))
    root, other = top / "ws", top / "other"
    (root / "src").mkdir(parents=True)
    (other / "x").mkdir(parents=True)
    (top / "up.txt").write_text("x")
    # Rules that would mask the workspace itself, or another added directory, from the walk of
    # the directory that holds them.
    rules = RuleSet(deny=[f"Read(/{root})", f"Read(/{other})", f"Read(/{top}/up.txt)"])

    source = masks_for(rules, root, (top, other))
    assert source is not None

    masks = source()

    assert masks.hidden_files == (f"{top}/up.txt",)
    # What lies in them is masked, by each one's own walk; never the directory itself.
    assert sorted(masks.hidden_dirs) == sorted([f"{other}/x", "src"])
