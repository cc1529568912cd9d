"""The `write` tool: create freely, overwrite only what was read, never leave half a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from moot.tools.read import read_tool
from moot.tools.write import write_tool
from moot.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


def test_a_new_file_is_created_with_its_parent_directories(ws: Workspace) -> None:
    result = write_tool(ws)(path="src/pkg/mod.py", content="x = 1\ny = 2\n")
    assert not result.is_error
    assert result.content == "Created src/pkg/mod.py (2 lines)."
    assert (ws.root / "src" / "pkg" / "mod.py").read_text() == "x = 1\ny = 2\n"


def test_overwriting_without_reading_is_refused(ws: Workspace) -> None:
    (ws.root / "notes.md").write_text("precious\n")
    result = write_tool(ws)(path="notes.md", content="gone\n")
    assert result.is_error and "read it first" in result.content
    assert (ws.root / "notes.md").read_text() == "precious\n"


def test_overwriting_after_a_read_works_until_the_file_changes(ws: Workspace) -> None:
    path = ws.root / "notes.md"
    path.write_text("v1\n")
    read_tool(ws)(path="notes.md")
    write = write_tool(ws)
    assert write(path="notes.md", content="v2\n").content == "Overwrote notes.md (1 line)."
    assert write(path="notes.md", content="v3\n").is_error is False  # its own write counts
    path.write_text("someone else\n")
    stale = write(path="notes.md", content="v4\n")
    assert stale.is_error and "changed on disk" in stale.content
    assert path.read_text() == "someone else\n"


def test_an_overwrite_keeps_line_endings_bom_and_mode(ws: Workspace) -> None:
    path = ws.root / "win.bat"
    path.write_bytes(b"\xef\xbb\xbf@echo off\r\necho hi\r\n")
    path.chmod(0o750)
    read_tool(ws)(path="win.bat")
    write_tool(ws)(path="win.bat", content="@echo off\necho bye\n")
    assert path.read_bytes() == b"\xef\xbb\xbf@echo off\r\necho bye\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750


def test_refused_paths(ws: Workspace) -> None:
    outside = ws.root.parent / "outside"
    outside.mkdir()
    (ws.root / "door").symlink_to(outside)
    write = write_tool(ws)
    for path, rule in [
        ("../escape.txt", "outside-workspace"),
        (str(outside / "x"), "outside-workspace"),
        ("door/x.txt", "symlink"),
        (".git/hooks/post-checkout", "protected"),
        (".moot/settings.json", "protected"),
        ("a\x00b", "nul-byte"),
        ("", "empty"),
    ]:
        result = write(path=path, content="x")
        assert result.is_error and f"({rule})" in result.content, path
    assert list(outside.iterdir()) == []
    assert sorted(os.listdir(ws.root)) == ["door"]


def test_a_file_in_the_way_of_a_directory_is_an_error(ws: Workspace) -> None:
    (ws.root / "file").write_text("")
    result = write_tool(ws)(path="file/child.txt", content="x")
    assert result.is_error and "not a directory" in result.content


def test_a_failure_while_writing_leaves_the_old_file_whole(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ws.root / "data.txt"
    path.write_text("old content\n")
    read_tool(ws)(path="data.txt")

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    result = write_tool(ws)(path="data.txt", content="new content\n" * 1000)
    assert result.is_error and "Input/output error" in result.content
    assert path.read_text() == "old content\n"
    assert sorted(os.listdir(ws.root)) == ["data.txt"]  # no temporary file left behind
