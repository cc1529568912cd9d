"""The `ls` tool: an indented tree, .gitignore honoured, symlinks shown but not followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.tools.ls import MAX_ENTRIES, ls_tool
from moot.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    for rel in (".gitignore", "README.md", "src/pkg/mod.py", "src/pkg/deep/x.py", "node/a.js"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("node/\n" if rel == ".gitignore" else "")
    (tmp_path / ".git").mkdir()
    (tmp_path / "out").symlink_to("/etc")
    return Workspace(tmp_path)


def test_a_tree_two_levels_deep(ws: Workspace) -> None:
    assert ls_tool(ws)().content == "\n".join(
        ["./", "  .gitignore", "  README.md", "  out@", "  src/", "    pkg/"]
    )


def test_depth_and_a_subdirectory(ws: Workspace) -> None:
    assert ls_tool(ws)(path="src", depth=3).content == "\n".join(
        ["src/", "  pkg/", "    deep/", "      x.py", "    mod.py"]
    )
    assert ls_tool(ws)(path="node").content == "node/\n  a.js"  # ignored, but asked for


def test_empty_directories_files_and_refusals(ws: Workspace) -> None:
    (ws.root / "empty").mkdir()
    ls = ls_tool(ws)
    assert ls(path="empty").content == "empty/\n  (empty)"
    assert ls(path="README.md").is_error
    assert "(outside-workspace)" in ls(path="out").content


def test_a_large_tree_is_capped(tmp_path: Path) -> None:
    for i in range(MAX_ENTRIES + 20):
        (tmp_path / f"f{i:04}").write_text("")
    lines = ls_tool(Workspace(tmp_path))().content.splitlines()
    assert len(lines) == MAX_ENTRIES + 2
    assert lines[-1].startswith(f"[capped at {MAX_ENTRIES} entries")
