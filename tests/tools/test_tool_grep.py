"""The `grep` tool, with ripgrep and with the Python search: the same answers, the same format."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from moot.tools.base import FunctionTool, ToolContext
from moot.tools.grep import grep_tool
from moot.workspace import Workspace
from moot.workspace.search import MAX_CONTENT_LINES, MAX_FILES
from programs import ripgrep

CTX = ToolContext("s", "r", "c", "main", "t")
RG = shutil.which("rg")


def need_ripgrep() -> None:
    """In CI ripgrep must be there (the parity tests are the point); locally it may be missing."""
    ripgrep()


@pytest.fixture(params=["python", "ripgrep"])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "ripgrep":
        need_ripgrep()
    return str(request.param)


def make_grep(ws: Workspace, backend: str) -> FunctionTool:
    return grep_tool(ws, use_ripgrep=backend == "ripgrep")


def make(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    make(
        root,
        {
            ".gitignore": "*.log\nbuild/\n",
            "src/app.py": "import os\n\ndef main():\n    foo = 1\n    return foo\n",
            "src/util.py": "def helper():\n    return 'FOO'\n",
            "notes.md": "a foo note\n",
            "build/out.js": "foo()\n",
            "debug.log": "foo happened\n",
            "blob.bin": b"\x00foo\x00",
        },
    )
    return Workspace(root)


def test_content_is_path_line_text_in_path_order(ws: Workspace, backend: str) -> None:
    result = make_grep(ws, backend)(pattern="foo")
    assert result.content == "\n".join(
        ["notes.md:1:a foo note", "src/app.py:4:    foo = 1", "src/app.py:5:    return foo"]
    )


def test_context_lines_use_dashes_and_groups_are_separated(ws: Workspace, backend: str) -> None:
    result = make_grep(ws, backend)(pattern="import|return foo", context=1)
    assert result.content.splitlines() == [
        "src/app.py:1:import os",
        "src/app.py-2-",
        "--",
        "src/app.py-4-    foo = 1",
        "src/app.py:5:    return foo",
    ]


def test_files_and_count_modes(ws: Workspace, backend: str) -> None:
    grep = make_grep(ws, backend)
    assert grep(pattern="foo", output="files").content == "notes.md\nsrc/app.py"
    assert grep(pattern="foo", output="count").content == "notes.md:1\nsrc/app.py:2"
    assert grep(pattern="foo", output="count", ignore_case=True).content == (
        "notes.md:1\nsrc/app.py:2\nsrc/util.py:1"
    )


def test_path_glob_and_exclude_narrow_the_search(ws: Workspace, backend: str) -> None:
    grep = make_grep(ws, backend)
    assert grep(pattern="foo", glob="*.md").content == "notes.md:1:a foo note"
    assert grep(pattern="foo", path="src", output="files").content == "src/app.py"
    assert grep(pattern="foo", exclude="src", output="files").content == "notes.md"
    assert grep(pattern="def", glob="src/*.py", output="files").content == (
        "src/app.py\nsrc/util.py"
    )
    assert grep(pattern="foo", path="src/app.py", output="count").content == "src/app.py:2"


def test_an_ignored_directory_searched_on_purpose_is_searched(ws: Workspace, backend: str) -> None:
    assert make_grep(ws, backend)(pattern="foo", path="build").content == "build/out.js:1:foo()"


def test_no_matches_bad_regex_and_bad_paths(ws: Workspace, backend: str) -> None:
    grep = make_grep(ws, backend)
    assert grep(pattern="nothing-like-this").content == "No matches."
    bad = grep(pattern="foo(")
    assert bad.is_error and "foo(" in bad.content
    missing = grep(pattern="foo", path="nope")
    assert missing.is_error and "no such file" in missing.content
    outside = grep(pattern="foo", path="..")
    assert outside.is_error and "(outside-workspace)" in outside.content


def test_output_is_capped(tmp_path: Path, backend: str) -> None:
    make(tmp_path, {f"f{i:03}.txt": "hit\n" * 3 for i in range(MAX_FILES + 5)})
    grep = make_grep(Workspace(tmp_path), backend)
    content = grep(pattern="hit").content.splitlines()
    assert len(content) == MAX_CONTENT_LINES + 1
    assert content[-1].startswith(f"[capped at {MAX_CONTENT_LINES} lines")
    files = grep(pattern="hit", output="files").content.splitlines()
    assert len(files) == MAX_FILES + 1 and files[-1].startswith(f"[capped at {MAX_FILES} files")


async def test_arguments_are_validated(ws: Workspace) -> None:
    grep = grep_tool(ws)
    bad = await grep.invoke({"pattern": "x", "output": "lines"}, CTX)
    assert bad.is_error and "output" in bad.content


# Parity: ripgrep and the Python search on one tree -----------------------------------------------


@pytest.fixture(scope="module")
def rich(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A tree with ignore rules at two levels, odd names, encodings, binaries and symlinks."""
    root = tmp_path_factory.mktemp("rich")
    big_then_binary = b"foo early\n" + b"a" * 200_000 + b"\nfoo late\n\x00tail\n"
    make(
        root,
        {
            ".gitignore": "*.log\nbuild/\n!important.log\n/root_only.txt\ndocs/*.tmp\n",
            "src/main.py": "def foo():\n    return foo_bar\n\n\n# foo\nclass Foo:\n    pass\n",
            "src/util.py": "import foo\nx = 123\ny = 4567\n",
            "src/deep/a/b/c.py": "def deep():\n    foo()\n",
            "tests/test_x.py": "def test_foo():\n    assert foo\n",
            "pkg/.gitignore": "generated/\n*.gen\n!keep.gen\n/local.txt\n",
            "pkg/generated/g.py": "foo\n",
            "pkg/keep.gen": "foo keep\n",
            "pkg/other.gen": "foo other\n",
            "pkg/local.txt": "foo local\n",
            "pkg/sub/local.txt": "foo sub local\n",
            "pkg/sub/x.gen": "foo: ignored by pkg/.gitignore, also when searching pkg/sub\n",
            "pkg/sub/generated/y.py": "foo\n",
            "README.md": "# Foo\nfoo bar\nnothing\n",
            "a-c.txt": "foo\n",
            "a.b": "foo\n",
            "a/b.txt": "foo\n",
            "B/z.txt": "FOO\n",
            ".hidden/h.txt": "foo hidden\n",
            ".github/workflows/ci.yml": "run: foo\n",
            ".git/config": "foo in git\n",
            "crlf.txt": "foo x\r\nbar x\r\nfoo\r\n",
            "utf16.txt": "\ufefffoo in utf-16\nbar\n".encode("utf-16-le"),
            "binary.bin": b"\x00\x01foo\x00",
            "late-binary.dat": big_then_binary,
            "latin1.txt": b"caf\xe9\nplain foo\n",
            "build/out.js": "foo()\n",
            "x.log": "foo log\n",
            "important.log": "foo important\n",
            "root_only.txt": "foo\n",
            "docs/root_only.txt": "foo\n",
            "docs/a.tmp": "foo\n",
            "docs/deeper/b.tmp": "foo\n",
            "with space.txt": "foo space\n",
            "we:ird.txt": "foo: colon\n",
            "ünï.txt": "foo ünï\n",
            "empty.txt": "",
            "no-newline.txt": "last foo",
        },
    )
    (root / "link.py").symlink_to(root / "src" / "main.py")
    (root / "linkdir").symlink_to(root / "src")
    return Workspace(root)


PATTERNS = ["foo", "^def ", r"fo+\b", "Foo", r"x$", r"\d{3}", "ünï", "nothing|bar"]
CASES = [
    *[{"pattern": p} for p in PATTERNS],
    *[{"pattern": p, "ignore_case": True} for p in ("foo", "FOO")],
    *[{"pattern": "foo", "output": o} for o in ("files", "count")],
    *[{"pattern": "foo", "path": p} for p in ("src", "pkg", "pkg/sub", "src/main.py", "build")],
    *[{"pattern": "foo", "path": p} for p in ("docs", "x.log", ".hidden", "linkdir")],
    *[{"pattern": "foo", "glob": g} for g in ("*.py", "src/**/*.py", "*.{py,md}", "*.txt")],
    *[{"pattern": "foo", "exclude": e} for e in ("tests", "*.txt", "src/deep/**", "a")],
    {"pattern": "foo", "glob": "*.py", "exclude": "deep"},
    {"pattern": "foo", "path": "src", "glob": "deep/**/*.py"},
    {"pattern": "foo", "context": 1},
    {"pattern": "foo|nothing", "context": 2, "path": "src"},
    {"pattern": "foo", "context": 3, "glob": "*.md"},
    {"pattern": "pass", "context": 2, "output": "count"},
]


@pytest.mark.parametrize(
    "case", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) for c in CASES]
)
def test_ripgrep_and_python_agree(rich: Workspace, case: dict[str, object]) -> None:
    need_ripgrep()
    by_rg = grep_tool(rich, use_ripgrep=True)(**case)
    by_python = grep_tool(rich, use_ripgrep=False)(**case)
    assert by_rg.is_error is by_python.is_error is False
    assert by_rg.content == by_python.content


def test_the_rich_tree_exercises_what_it_should(rich: Workspace) -> None:
    """Guards the parity test against agreeing on nothing: the Python answer is as intended."""
    grep = grep_tool(rich, use_ripgrep=False)
    files = grep(pattern="foo", output="files").content.splitlines()
    assert files == [
        ".github/workflows/ci.yml",
        ".hidden/h.txt",
        "README.md",
        "a/b.txt",
        "a-c.txt",
        "a.b",
        "crlf.txt",
        "docs/deeper/b.tmp",
        "docs/root_only.txt",
        "important.log",
        "latin1.txt",
        "no-newline.txt",
        "pkg/keep.gen",
        "pkg/sub/local.txt",
        "src/deep/a/b/c.py",
        "src/main.py",
        "src/util.py",
        "tests/test_x.py",
        "utf16.txt",
        "we:ird.txt",
        "with space.txt",
        "ünï.txt",
    ]
    assert "crlf.txt:1:foo x\ncrlf.txt:2:bar x" in grep(pattern="x$").content


def test_every_combination_of_output_and_filters_agrees(rich: Workspace) -> None:
    need_ripgrep()
    rg, py = grep_tool(rich, use_ripgrep=True), grep_tool(rich, use_ripgrep=False)
    for output, glob, context in itertools.product(
        ("content", "files", "count"), (None, "*.py", "**/*.txt"), (0, 2)
    ):
        args = {"pattern": "foo", "output": output, "glob": glob, "context": context}
        assert rg(**args).content == py(**args).content, args


def test_ignore_files_and_the_excludes_hide_the_same_files_from_both_backends(
    tmp_path: Path, backend: str
) -> None:
    make(
        tmp_path,
        {
            "keep.py": "needle\n",
            "a/x.tmp": "needle\n",
            "a/b/local.cfg": "needle\n",
            "notes/draft.md": "needle\n",
            "notes/final.md": "needle\n",
            "sub/deep/y.tmp": "needle\n",
            ".gitignore": "*.cfg\n",
            ".ignore": "*.tmp\ndraft.md\n",
            "notes/.rgignore": "!draft.md\nfinal.md\n",
            "sub/deep/.ignore": "!y.tmp\n",
            ".git/info/exclude": "keep.py\n",
        },
    )
    grep = make_grep(Workspace(tmp_path), backend)

    found = grep(pattern="needle", output="files").content.splitlines()
    inside = grep(pattern="needle", path="sub", output="files").content.splitlines()

    assert found == ["notes/draft.md", "sub/deep/y.tmp"]
    assert inside == ["sub/deep/y.tmp"]
