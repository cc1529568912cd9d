"""The `glob` tool: matching files, newest first, .gitignore honoured, capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.tools.glob import MAX_FILES, glob_tool
from moot.workspace import Workspace
from moot.workspace.ignore import GlobPattern
from moot.workspace.walk import below, walk_files


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


PATTERNS = [
    "*.py", "src/*.md", "**/*.{py,md}", "**/*.py", "m*.py", "*", "**", "src/**", "docs/",
    "file?.txt", "[!a]*.md", "a\\*.md", "**/test_*.py", "src/**/*.py", "/top.txt", "a**b",
]  # fmt: skip


def walked(ws: Workspace, pattern: str, path: str) -> str:
    """What glob answered before the file index: a walk, matched, newest first."""
    matcher = GlobPattern(pattern)
    start = ws.resolve_read(path)
    base = ws.relative(start)
    found = [
        (entry.mtime_ns, entry.rel)
        for entry in walk_files(ws.root, start, ws.ignore())
        if matcher.matches(below(base, entry.rel))
    ]
    found.sort(key=lambda item: (-item[0], item[1]))
    return "\n".join(rel for _, rel in found) or f"No files match {pattern!r}."


@pytest.mark.parametrize("ripgrep", [True, False], ids=["ripgrep", "no-ripgrep"])
def test_the_file_index_answers_every_pattern_as_the_walk_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ripgrep: bool
) -> None:
    if not ripgrep:
        monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # the index builds with the walk
    tree = [
        "top.txt", "a*.md", "b.md", "ab", "a/xb", "src/x.py", "src/readme.md", "src/deep/m1.py",
        "src/deep/tests/test_a.py", "docs/a/b.md", "file1.txt", "file10.txt", ".hidden/h.py",
        "build/skip.py", "src/build/also.py", "lib/src/mod.py", "a-b/c.py", "a.b/c.py",
    ]  # fmt: skip
    for number, rel in enumerate(tree):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        os.utime(path, (1000 + number % 5, 1000 + number % 5))  # ties: ordered by path
    (tmp_path / ".gitignore").write_text("build/\n")
    ws = Workspace(tmp_path)
    glob = glob_tool(ws)

    for pattern in PATTERNS:
        for path in (".", "src", "a"):
            assert glob(pattern=pattern, path=path).content == walked(ws, pattern, path), pattern
    assert (ws.file_index()._rg is None) is not ripgrep
