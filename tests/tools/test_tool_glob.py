"""The `glob` tool: matching files, newest first, .gitignore honoured, capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.tools.glob import MAX_FILES, glob_tool
from moot.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    files: dict[str, int | None] = {
        ".gitignore": None,
        "old.py": 100,
        "src/new.py": 300,
        "src/mid.py": 200,
        "src/readme.md": 400,
        "dist/built.py": 500,
        ".git/hook.py": 600,
    }
    for rel, mtime in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("dist/\n" if rel == ".gitignore" else "x")
        if isinstance(mtime, int):
            os.utime(path, (mtime, mtime))
    return Workspace(tmp_path)


def test_matches_come_newest_first_and_skip_ignored_files(ws: Workspace) -> None:
    assert glob_tool(ws)(pattern="*.py").content == "src/new.py\nsrc/mid.py\nold.py"


def test_patterns_with_a_slash_are_relative_to_the_path(ws: Workspace) -> None:
    glob = glob_tool(ws)
    assert glob(pattern="src/*.md").content == "src/readme.md"
    assert glob(pattern="*.py", path="src").content == "src/new.py\nsrc/mid.py"
    assert glob(pattern="m*.py", path="src").content == "src/mid.py"
    assert glob(pattern="**/*.{py,md}").content.splitlines()[0] == "src/readme.md"


def test_an_ignored_directory_can_be_globbed_on_purpose(ws: Workspace) -> None:
    assert glob_tool(ws)(pattern="*.py", path="dist").content == "dist/built.py"


def test_no_match_and_errors(ws: Workspace) -> None:
    glob = glob_tool(ws)
    assert glob(pattern="*.rs").content == "No files match '*.rs'."
    assert "not a directory" in glob(pattern="*", path="old.py").content
    assert "(outside-workspace)" in glob(pattern="*", path="/").content
    assert "empty" in glob(pattern="").content


def test_many_matches_are_capped_with_a_note(tmp_path: Path) -> None:
    for i in range(MAX_FILES + 10):
        (tmp_path / f"f{i:03}.txt").write_text("")
    lines = glob_tool(Workspace(tmp_path))(pattern="*.txt").content.splitlines()
    assert len(lines) == MAX_FILES + 1
    assert lines[-1] == f"[the {MAX_FILES} newest of {MAX_FILES + 10}; narrow the pattern or path]"
