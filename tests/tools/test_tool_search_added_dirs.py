"""`ls`, `glob` and `grep` in a directory added beside the workspace (`--add-dir`): walked with
its own `.gitignore` files, its files shown by absolute path (the workspace's stay relative),
what `Read(...)` deny rules cover hidden, and nothing outside it reached (`..`, symlinks)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from moot.client.rules import hide_read_denied
from moot.permissions.rules import RuleSet
from moot.tools.base import FunctionTool, ToolContext
from moot.tools.glob import glob_tool
from moot.tools.grep import grep_tool
from moot.tools.ls import ls_tool
from moot.workspace.paths import Workspace

CTX = ToolContext("s", "r", "c", "main", "t")


@pytest.fixture(params=["python", "ripgrep"])
def backend(request: pytest.FixtureRequest) -> str:
    from tests.tools.test_tool_grep import need_ripgrep

    if request.param == "ripgrep":
        need_ripgrep()
    return str(request.param)


def _run(tool: FunctionTool, **arguments: Any) -> tuple[bool, str]:
    result = asyncio.run(tool.invoke(arguments, CTX))
    return result.is_error, str(result.content)


def _place(tmp_path: Path, deny: tuple[str, ...] = ()) -> tuple[Workspace, Path]:
    root, other = tmp_path / "ws", tmp_path / "other"
    (root / "src").mkdir(parents=True)
    (other / "lib" / "build").mkdir(parents=True)
    (root / "src" / "w.py").write_text("needle in the workspace\n")
    (other / "lib" / "a.py").write_text("needle in a\n")
    (other / "lib" / "build" / "gen.py").write_text("needle generated\n")
    (other / "secret.py").write_text("needle secret\n")
    (other / ".gitignore").write_text("build/\n")
    (tmp_path / "outside.py").write_text("needle outside\n")
    (other / "out").symlink_to(tmp_path)
    workspace = Workspace(root, added_roots=(other,))
    hide_read_denied(workspace, RuleSet(deny=deny))
    return workspace, Path(os.path.realpath(other))


def test_glob_walks_an_added_directory_and_shows_absolute_paths(tmp_path: Path) -> None:
    workspace, other = _place(tmp_path)

    error, text = _run(glob_tool(workspace), pattern="*.py", path=str(other))
    _, in_workspace = _run(glob_tool(workspace), pattern="*.py")

    assert not error, text
    assert sorted(text.splitlines()) == [f"{other}/lib/a.py", f"{other}/secret.py"]
    assert in_workspace == "src/w.py"


def test_ls_lists_an_added_directory_with_its_ignore_files(tmp_path: Path) -> None:
    workspace, other = _place(tmp_path)

    error, text = _run(ls_tool(workspace), path=str(other / "lib"), depth=3)

    assert not error, text
    assert text.splitlines() == [f"{other}/lib/", "  a.py"]


def test_grep_searches_an_added_directory_the_same_with_either_backend(
    tmp_path: Path, backend: str
) -> None:
    workspace, other = _place(tmp_path)
    grep = grep_tool(workspace, use_ripgrep=backend == "ripgrep")

    error, text = _run(grep, pattern="needle", path=str(other))
    _, files = _run(grep, pattern="needle", path=str(other / "lib"), output="files")
    _, one = _run(grep, pattern="needle", path=str(other / "lib" / "a.py"), output="count")

    assert not error, text
    assert text.splitlines() == [
        f"{other}/lib/a.py:1:needle in a",
        f"{other}/secret.py:1:needle secret",
    ]
    assert files == f"{other}/lib/a.py"
    assert one == f"{other}/lib/a.py:1"


@pytest.mark.parametrize("deny", ["Read(/{tmp}/other/secret.py)", "Read(secret.py)"])
def test_what_a_read_deny_rule_covers_in_an_added_directory_is_hidden(
    tmp_path: Path, backend: str, deny: str
) -> None:
    workspace, other = _place(tmp_path, deny=(deny.format(tmp=tmp_path),))
    grep = grep_tool(workspace, use_ripgrep=backend == "ripgrep")

    _, found = _run(grep, pattern="needle", path=str(other))
    _, globbed = _run(glob_tool(workspace), pattern="*.py", path=str(other))
    _, listed = _run(ls_tool(workspace), path=str(other))
    error, named = _run(grep, pattern="needle", path=str(other / "secret.py"))

    assert "secret" not in found + globbed + listed
    assert f"{other}/lib/a.py" in found and f"{other}/lib/a.py" in globbed
    assert error and "Read deny rule" in named, named


@pytest.mark.parametrize("tool", ["ls", "glob", "grep"])
@pytest.mark.parametrize("escape", ["{other}/out", "{other}/..", "{other}/out/ws", "{tmp}"])
def test_nothing_outside_the_roots_is_walked(tmp_path: Path, tool: str, escape: str) -> None:
    workspace, other = _place(tmp_path)
    make = {"ls": ls_tool, "glob": glob_tool, "grep": grep_tool}[tool]
    arguments = {"ls": {}, "glob": {"pattern": "*.py"}, "grep": {"pattern": "needle"}}[tool]
    path = escape.format(other=other, tmp=tmp_path)

    error, text = _run(make(workspace), **arguments, path=path)

    if escape == "{other}/out/ws":  # the link leads into the workspace: walked as the workspace
        assert not error and "outside" not in text, text
    else:
        assert error, text
        assert "outside.py" not in text


def test_a_symlink_in_an_added_directory_is_listed_never_followed(
    tmp_path: Path, backend: str
) -> None:
    workspace, other = _place(tmp_path)
    grep = grep_tool(workspace, use_ripgrep=backend == "ripgrep")

    _, listed = _run(ls_tool(workspace), path=str(other), depth=1)
    _, found = _run(grep, pattern="outside", path=str(other))
    _, globbed = _run(glob_tool(workspace), pattern="**/*", path=str(other))

    assert "  out@" in listed.splitlines()
    assert found == "No matches."
    assert "outside" not in globbed


def test_an_added_directory_holding_the_workspace_is_walked(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "w.py").write_text("needle\n")
    (tmp_path / "up.py").write_text("needle\n")
    workspace = Workspace(root, added_roots=(tmp_path,))
    hide_read_denied(workspace, RuleSet(deny=["Read(src/**)"]))
    top = os.path.realpath(tmp_path)

    _, globbed = _run(glob_tool(workspace), pattern="*.py", path=top)

    assert globbed.splitlines() == [f"{top}/up.py"]  # the workspace's rules hide src/ there too


def test_another_name_of_a_hidden_file_in_an_added_directory_is_skipped(
    tmp_path: Path, backend: str
) -> None:
    from moot.client.rules import inode_check

    rules = RuleSet(deny=["Read(secret.py)"])
    workspace, other = _place(tmp_path, deny=("Read(secret.py)",))
    os.link(other / "secret.py", other / "lib" / "alias.py")
    workspace.hidden_inodes = inode_check(rules, workspace.root, added=(other,))
    grep = grep_tool(workspace, use_ripgrep=backend == "ripgrep")

    _, found = _run(grep, pattern="needle", path=str(other))
    error, named = _run(grep, pattern="needle", path=str(other / "lib" / "alias.py"))

    assert "secret" not in found and f"{other}/lib/a.py" in found
    assert error and "Read deny rule" in named, named
