"""Which files a walk skips (.gitignore) and keeps (globs): `moot.workspace.ignore` and `walk`."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.workspace.ignore import GitIgnore, GlobPattern, expand_braces
from moot.workspace.walk import path_order, walk, walk_files


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def listed(root: Path, start: str = ".") -> list[str]:
    return [entry.rel for entry in walk_files(root, root / start, GitIgnore(root))]


def test_patterns_negation_directories_and_anchors(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".gitignore": "*.log\n!keep.log\nbuild/\n/top.txt\n# a comment\n\ndocs/*.tmp\n",
            "a.log": "",
            "keep.log": "",
            "src/b.log": "",
            "src/keep.log": "",
            "build/out.js": "",
            "src/build/out.js": "",
            "build.txt": "",
            "top.txt": "",
            "src/top.txt": "",
            "docs/x.tmp": "",
            "docs/deeper/x.tmp": "",
            "main.py": "",
        },
    )
    assert listed(tmp_path) == [
        ".gitignore",
        "build.txt",
        "docs/deeper/x.tmp",
        "keep.log",
        "main.py",
        "src/keep.log",
        "src/top.txt",
    ]


def test_a_directory_pattern_does_not_match_a_file_of_that_name(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "out/\n", "out": "a file", "x/out/y": ""})
    assert listed(tmp_path) == [".gitignore", "out"]


def test_nested_gitignore_files_are_relative_to_their_directory_and_win(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".gitignore": "*.gen\n",
            "pkg/.gitignore": "!special.gen\n/local.txt\n",
            "pkg/special.gen": "",
            "pkg/other.gen": "",
            "pkg/local.txt": "",
            "pkg/sub/local.txt": "",
            "special.gen": "",
        },
    )
    assert listed(tmp_path) == [
        ".gitignore",
        "pkg/.gitignore",
        "pkg/special.gen",
        "pkg/sub/local.txt",
    ]


def test_a_file_in_an_ignored_directory_cannot_be_re_included(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "vendor/\n!vendor/keep.txt\n", "vendor/keep.txt": ""})
    assert listed(tmp_path) == [".gitignore"]


def test_a_walk_started_inside_an_ignored_directory_sees_its_contents(tmp_path: Path) -> None:
    make(tmp_path, {".gitignore": "node_modules/\n*.map\n", "node_modules/lib/a.js": ""})
    make(tmp_path, {"node_modules/lib/a.js.map": ""})
    assert listed(tmp_path, "node_modules") == ["node_modules/lib/a.js"]


def test_git_is_always_skipped_and_symlinks_never_followed(tmp_path: Path) -> None:
    make(tmp_path, {".git/config": "", "sub/.git": "gitdir: elsewhere", "sub/a.txt": ""})
    (tmp_path / "link").symlink_to(tmp_path / "sub")
    (tmp_path / "link.txt").symlink_to(tmp_path / "sub" / "a.txt")
    assert listed(tmp_path) == ["sub/a.txt"]
    entries = {e.rel: e for e in walk(tmp_path, tmp_path, GitIgnore(tmp_path))}
    assert entries["link"].is_link and not entries["link"].is_dir
    assert "link/a.txt" not in entries


def test_a_symlinked_gitignore_is_not_read(tmp_path: Path) -> None:
    make(tmp_path, {"rules": "*\n", "a.txt": ""})
    (tmp_path / ".gitignore").symlink_to(tmp_path / "rules")
    assert listed(tmp_path) == ["a.txt", "rules"]


def test_walk_order_is_path_order_and_depth_is_bounded(tmp_path: Path) -> None:
    make(tmp_path, {"a/b": "", "a-c": "", "a.b": "", "B": "", "a/x/y/z": ""})
    rels = listed(tmp_path)
    assert rels == sorted(rels, key=path_order) == ["B", "a/b", "a/x/y/z", "a-c", "a.b"]
    shallow = [e.rel for e in walk(tmp_path, tmp_path, GitIgnore(tmp_path), max_depth=2)]
    assert shallow == ["B", "a", "a/b", "a/x", "a-c", "a.b"]


# Globs -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/deep/a.py", True),
        ("*.py", "a.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/deep/a.py", False),
        ("src/*.py", "lib/src/a.py", False),
        ("/src/*.py", "src/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("**/test_*.py", "tests/test_a.py", True),
        ("**/*.{ts,tsx}", "web/app.tsx", True),
        ("*.{ts,tsx}", "web/app.js", False),
        ("docs/", "docs/a/b.md", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
        ("[ab].md", "b.md", True),
        ("a\\*.md", "a*.md", True),
        ("a\\*.md", "ab.md", False),
    ],
)
def test_glob_patterns(pattern: str, path: str, expected: bool) -> None:
    assert GlobPattern(pattern).matches(path) is expected
    # What glob reads the file index with: one expression over many paths, the same answer.
    assert GlobPattern(pattern).select([path]) == ([path] if expected else [])
    assert GlobPattern(pattern).select([f"base/{path}"], len("base/")) == (
        [f"base/{path}"] if expected else []
    )


@pytest.mark.parametrize("pattern", ["a**b", "**a", "*/b", "a*", "[!x]**", "x/**/y", "{a,*/c}"])
def test_select_keeps_what_matches_keeps(pattern: str) -> None:
    paths = ["a/xb", "ab", "xa/b", "a/b/c", "b", "x/y", "x/z/y", "c/a", "q/c", "a"]
    glob = GlobPattern(pattern)
    assert glob.select(paths) == [rel for rel in paths if glob.matches(rel)]


def test_glob_excludes_cover_what_is_inside_a_matched_directory() -> None:
    assert GlobPattern("build").matches_or_under("build/x/y.py")
    assert GlobPattern("tests/**").matches_or_under("tests/a.py")
    assert not GlobPattern("build").matches_or_under("src/builder.py")


def test_basename_globs_are_offered_to_ripgrep_only_without_a_slash() -> None:
    assert GlobPattern("*.{py,pyi}").basename_globs == ("*.py", "*.pyi")
    assert GlobPattern("src/*.py").basename_globs is None


def test_brace_expansion() -> None:
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert expand_braces("{x}") == ["{x}"]
    assert expand_braces("a{b") == ["a{b"]
    with pytest.raises(ValueError, match="empty"):
        GlobPattern(" ")
