"""A workspace's added roots (`--add-dir`): read and written as the root is, with the same
containment, and nothing beyond them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from moot.workspace.no_follow import PathRefused
from moot.workspace.paths import Workspace


def _workspace(tmp_path: Path) -> tuple[Workspace, Path]:
    root, other = tmp_path / "root", tmp_path / "other"
    root.mkdir()
    other.mkdir()
    return Workspace(root, added_roots=(other,)), other


def test_a_file_in_an_added_root_is_read_and_written(tmp_path: Path) -> None:
    workspace, other = _workspace(tmp_path)
    (other / "a.txt").write_text("a")

    assert workspace.resolve_read(str(other / "a.txt")) == other / "a.txt"
    target = workspace.resolve_write(str(other / "sub" / "b.txt"))
    writer = workspace.write_bytes(target, b"b", run_id="run_1")

    assert (other / "sub" / "b.txt").read_bytes() == b"b"
    assert "rewind will not restore it" in writer.snapshot_note


@pytest.mark.parametrize("name", [".git/config", ".moot/settings.json"])
def test_an_added_roots_protected_paths_need_approval(tmp_path: Path, name: str) -> None:
    workspace, other = _workspace(tmp_path)

    with pytest.raises(PathRefused) as refused:
        workspace.resolve_write(str(other / name))

    assert refused.value.rule == "protected"
    assert workspace.resolve_write(str(other / name), allow_protected=True) == other / name


def test_a_symlink_cannot_lead_out_of_an_added_root(tmp_path: Path) -> None:
    workspace, other = _workspace(tmp_path)
    (tmp_path / "secret.txt").write_text("s")
    (other / "out").symlink_to(tmp_path)

    with pytest.raises(PathRefused):
        workspace.resolve_read(str(other / "out" / "secret.txt"))
    with pytest.raises(PathRefused):
        workspace.resolve_write(str(other / "out" / "x.txt"))
    with pytest.raises(PathRefused):
        workspace.resolve_write(str(other / ".." / "x.txt"))


def test_the_added_root_itself_and_a_sibling_are_refused(tmp_path: Path) -> None:
    workspace, other = _workspace(tmp_path)
    (tmp_path / "other-too").mkdir()

    with pytest.raises(PathRefused):
        workspace.resolve_write(str(other))
    with pytest.raises(PathRefused):
        workspace.resolve_write(str(tmp_path / "other-too" / "x.txt"))


@pytest.mark.parametrize("tool", ["ls", "glob", "grep"])
def test_the_tools_that_walk_a_tree_refuse_a_read_root_and_say_how_to_reach_it(
    tmp_path: Path, tool: str
) -> None:
    from moot.tools.base import ToolContext
    from moot.tools.glob import glob_tool
    from moot.tools.grep import grep_tool
    from moot.tools.ls import ls_tool

    root, saved = tmp_path / "root", tmp_path / "saved"
    root.mkdir()
    saved.mkdir()
    (saved / "a.txt").write_text("hi")
    workspace = Workspace(root, read_roots=(saved,))
    make = {"ls": ls_tool, "glob": glob_tool, "grep": grep_tool}[tool]
    arguments = {"ls": {}, "glob": {"pattern": "*.txt"}, "grep": {"pattern": "hi"}}[tool]

    ctx = ToolContext("s", "r", "c", "main", "t")
    result = asyncio.run(make(workspace).invoke({**arguments, "path": str(saved)}, ctx))

    assert result.is_error
    assert "read its files by path" in str(result.content)
    assert "not in the subpath" not in str(result.content)
