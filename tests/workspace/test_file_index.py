"""The workspace's file index (issue 31): one listing that glob, `@path` completion and the
repository map share, built once (by ripgrep, or by the walk without it) and kept fresh by
directories' modification times; what deny rules hide is never listed, symlinks are never
followed, and both builds list the same files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from moot.permissions.rules import RuleSet, read_denied
from moot.tools.glob import glob_tool
from moot.workspace.file_index import FileIndex
from moot.workspace.paths import Workspace
from moot.workspace.walk import walk_files
from programs import ripgrep


@pytest.fixture(params=["ripgrep", "walk"])
def rg(request: pytest.FixtureRequest) -> str | None:
    """The ripgrep to build with (None: the walk builds the index)."""
    if request.param == "walk":
        return None
    return ripgrep()


def write(root: Path, *paths: str) -> None:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")


def walked(root: Path) -> tuple[str, ...]:
    """What the walk (glob's old source) finds, sorted as the index lists."""
    ws = Workspace(root)
    return tuple(sorted(entry.rel for entry in walk_files(ws.root, ws.root, ws.ignore())))


def test_files_added_removed_and_renamed_show_at_the_next_look_without_a_rebuild(
    tmp_path: Path, rg: str | None
) -> None:
    write(tmp_path, "a/x.py", "a/b/y.py", "only_ignored/z.log", "keep.txt")
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "empty" / "inner").mkdir(parents=True)
    index = FileIndex(tmp_path, rg)
    assert index.listing().files == (".gitignore", "a/b/y.py", "a/x.py", "keep.txt")

    write(tmp_path, "a/new.py", "empty/inner/made.py", "only_ignored/kept.py", "fresh/d/z.py")
    (tmp_path / "a" / "x.py").unlink()
    (tmp_path / "a" / "b").rename(tmp_path / "a" / "c")
    (tmp_path / "keep.txt").rename(tmp_path / "kept.txt")

    expected = (
        ".gitignore",
        "a/c/y.py",
        "a/new.py",
        "empty/inner/made.py",
        "fresh/d/z.py",
        "kept.txt",
        "only_ignored/kept.py",
    )
    assert index.listing().files == expected == walked(tmp_path)
    shutil.rmtree(tmp_path / "a")
    assert "a/new.py" not in index.listing().files
    assert index.builds == 1


def test_a_gitignore_that_changes_rebuilds_the_index(tmp_path: Path, rg: str | None) -> None:
    write(tmp_path, "src/app.py", "src/gen.py", "notes.md")
    (tmp_path / "src" / ".gitignore").write_text("gen.py\n")
    index = FileIndex(tmp_path, rg)
    assert "src/gen.py" not in index.listing().files

    (tmp_path / "src" / ".gitignore").write_text("app.py\n")  # edited in place
    assert index.listing().files == ("notes.md", "src/.gitignore", "src/gen.py")
    (tmp_path / ".gitignore").write_text("*.md\n")  # a new one
    assert "notes.md" not in index.listing().files
    assert index.builds == 3


def test_what_deny_rules_hide_is_never_listed(tmp_path: Path, rg: str | None) -> None:
    write(tmp_path, "app/main.py", "app/.env", "secret/key.pem", "secret/deep/more.txt")
    rules = RuleSet(deny=["Read(secret/**)", "Read(**/.env)"])
    hidden = read_denied(rules, tmp_path)
    index = FileIndex(tmp_path, rg)

    assert index.listing(hidden).files == ("app/main.py",)
    assert "secret" not in index.listing(hidden).directories
    assert len(index.listing().files) == 4  # the rules decide per look, not the index


def test_a_directory_swapped_for_a_symlink_is_not_followed(tmp_path: Path, rg: str | None) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    write(root, "d/a.py", "top.py")
    write(outside, "secret.py")
    os.symlink(outside / "secret.py", root / "link.py")
    index = FileIndex(root, rg)
    assert index.listing().files == ("d/a.py", "top.py")

    shutil.rmtree(root / "d")
    os.symlink(outside, root / "d")
    assert index.listing().files == ("top.py",)


def test_ripgrep_and_the_walk_list_the_same_files(tmp_path: Path) -> None:
    rg = ripgrep()
    write(
        tmp_path, "a/keep.py", "a/drop.log", "a/b/keep.log", "build/out.py", "x/.hidden/h.py",
        "x/y/z/deep.txt", ".git/config", "node/keep.js",
    )  # fmt: skip
    (tmp_path / ".gitignore").write_text("*.log\n!a/b/keep.log\nbuild/\n")
    (tmp_path / "x" / ".gitignore").write_text("y/\n")
    (tmp_path / "only-dirs" / "one" / "two").mkdir(parents=True)
    os.mkfifo(tmp_path / "a" / "pipe.py")

    built = FileIndex(tmp_path, rg).listing()
    assert built.files == FileIndex(tmp_path, None).listing().files == walked(tmp_path)
    assert "only-dirs/one/two" in built.directories


def test_every_file_is_listed_past_twenty_thousand(tmp_path: Path) -> None:
    """`@` completion listed the first 20,000 files in walk order: in a bigger repository the
    rest could never be suggested (issue 31)."""
    for group in range(21):
        directory = tmp_path / f"pkg{group:02}"
        directory.mkdir()
        for number in range(1000):
            (directory / f"m{number:03}.py").touch()
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "last_one.py").touch()

    files = Workspace(tmp_path).file_listing().files

    assert len(files) == 21_001
    assert files[-1] == "zz/last_one.py"


def test_glob_sees_a_file_made_after_its_first_look(tmp_path: Path) -> None:
    write(tmp_path, "src/a.py")
    ws = Workspace(tmp_path)
    glob = glob_tool(ws)
    assert glob(pattern="**/*.py").content == "src/a.py"

    write(tmp_path, "src/new/b.py")
    os.utime(tmp_path / "src" / "new" / "b.py", (1, 1))
    assert glob(pattern="**/*.py").content == "src/a.py\nsrc/new/b.py"
    assert glob(pattern="*.py", path="src/new").content == "src/new/b.py"
    assert ws.file_index().builds == 1


def rg_lists(root: Path) -> tuple[str, ...]:
    """What ripgrep itself lists with its own ignore files read (.gitignore, .ignore,
    .rgignore, .git/info/exclude), hidden files included."""
    rg = shutil.which("rg")
    assert rg is not None
    out = subprocess.run(
        [rg, "--files", "--no-config", "--hidden", "--no-require-git", "--glob=!.git"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return tuple(sorted(out.splitlines()))


def test_dot_ignore_rgignore_and_git_exclude_are_honoured_as_ripgrep_honours_them(
    tmp_path: Path, rg: str | None
) -> None:
    write(
        tmp_path, "keep.py", "a/x.tmp", "a/x.py", "a/b/local.cfg", "notes/draft.md",
        "notes/final.md", "gen/out.py", "gen/keep_me.py", ".env.example", ".hidden/h.py",
        "sub/deep/x.tmp",
    )  # fmt: skip
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("*.cfg\n")
    (tmp_path / ".gitignore").write_text("gen/*\n!gen/keep_me.py\n")
    (tmp_path / ".ignore").write_text("*.tmp\ndraft.md\n")
    (tmp_path / "sub" / ".gitignore").write_text("!x.tmp\n")  # .ignore decides first
    (tmp_path / "notes" / ".rgignore").write_text("!draft.md\nfinal.md\n")

    listed = FileIndex(tmp_path, rg).listing().files

    assert listed == rg_lists(tmp_path) == walked(tmp_path)
    for hidden in ("a/x.tmp", "a/b/local.cfg", "notes/final.md", "gen/out.py", "sub/deep/x.tmp"):
        assert hidden not in listed
    for shown in ("notes/draft.md", "gen/keep_me.py", ".env.example", ".hidden/h.py"):
        assert shown in listed


def test_an_ignore_file_or_the_excludes_changed_rebuild_the_index(
    tmp_path: Path, rg: str | None
) -> None:
    write(tmp_path, "a/one.py", "a/two.log", "b/three.cfg")
    (tmp_path / ".git" / "info").mkdir(parents=True)
    index = FileIndex(tmp_path, rg)
    assert len(index.listing().files) == 3

    (tmp_path / "a" / ".ignore").write_text("*.log\n")
    assert index.listing().files == ("a/.ignore", "a/one.py", "b/three.cfg")
    (tmp_path / ".git" / "info" / "exclude").write_text("*.cfg\n")
    assert index.listing().files == ("a/.ignore", "a/one.py") == rg_lists(tmp_path)
    (tmp_path / "a" / ".ignore").write_text("one.py\n")
    assert index.listing().files == ("a/.ignore", "a/two.log") == rg_lists(tmp_path)
    assert index.builds == 4
