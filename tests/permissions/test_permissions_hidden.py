"""A `Read(...)` deny hides its paths from glob, ls and grep (ripgrep and the fallback), from
the git tools' output and from the repo map."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from moot.permissions.decide import decide, tool_hidden
from moot.permissions.rules import RuleSet, read_denied
from moot.protocol.approval import ApprovalRequest
from moot.protocol.modes import PermissionMode
from moot.tools.base import FunctionTool, SideEffect, ToolContext
from moot.tools.git_tools import git_tools
from moot.tools.glob import glob_tool
from moot.tools.grep import grep_tool
from moot.tools.ls import ls_tool
from moot.tools.repo_map import repo_map_tool
from moot.tools.symbols import symbols_tool
from moot.workspace.paths import Workspace
from programs import ripgrep

CTX = ToolContext("s", "r", "c", "a", "t")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / ".env").write_text("TOKEN=secret\n")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / ".env").write_text("TOKEN=nested\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id.pem").write_text("TOKEN=pem\n")
    (tmp_path / "app.py").write_text("TOKEN = read_from_env()\n")
    workspace = Workspace(tmp_path)
    rules = RuleSet(deny=["Read(./.env)", "Read(keys/**)"])
    workspace.hidden = read_denied(rules, workspace.root)
    return workspace


def test_no_read_deny_means_no_predicate(tmp_path: Path) -> None:
    assert read_denied(RuleSet(deny=["Bash(rm:*)", "Edit(src/**)"]), tmp_path) is None


@pytest.mark.parametrize("use_ripgrep", [True, False])
async def test_grep_never_shows_a_denied_file(ws: Workspace, use_ripgrep: bool) -> None:
    if use_ripgrep:
        ripgrep()
    grep = grep_tool(ws, use_ripgrep=use_ripgrep)
    result = await grep.invoke({"pattern": "TOKEN"}, CTX)
    assert "secret" not in result.content and "pem" not in result.content
    assert "app.py" in result.content
    assert "config/.env" in result.content  # `./.env` denies only the top-level file


async def test_glob_and_ls_never_list_a_denied_path(ws: Workspace) -> None:
    listed = (await glob_tool(ws).invoke({"pattern": "*"}, CTX)).content
    tree = (await ls_tool(ws).invoke({"path": ".", "depth": 3}, CTX)).content
    for shown in (listed, tree):
        assert "id.pem" not in shown
        assert "app.py" in shown
    lines = listed.splitlines()
    assert ".env" not in lines
    assert "config/.env" in lines


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Workspace, dict[str, FunctionTool]]:
    """A repository whose last commit and work tree both touch a denied file."""
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.invalid")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / ".env").write_text("TOKEN=first\n")
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "id.pem").write_text("PEM=first\n")
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / ".env").write_text("TOKEN=second\n")
    (tmp_path / "keys" / "id.pem").write_text("PEM=second\n")
    (tmp_path / "app.py").write_text("def main():\n    return 2\n")
    git(tmp_path, "commit", "-q", "-am", "two")
    (tmp_path / ".env").write_text("TOKEN=third\n")
    (tmp_path / "keys" / "id.pem").write_text("PEM=third\n")
    (tmp_path / "app.py").write_text("def main():\n    return 3\n")
    (tmp_path / "keys" / "new.pem").write_text("PEM=untracked\n")
    workspace = Workspace(tmp_path)
    workspace.hidden = read_denied(RuleSet(deny=["Read(./.env)", "Read(keys/)"]), workspace.root)
    return workspace, {t.name: t for t in git_tools(workspace)}


@pytest.mark.parametrize("staged", [False, True])
async def test_git_diff_leaves_out_denied_files(repo, staged: bool) -> None:
    workspace, tools = repo
    if staged:
        git(workspace.root, "add", "-A")
    shown = (await tools["git_diff"].invoke({"staged": staged}, CTX)).content
    assert "return 3" in shown
    assert "TOKEN" not in shown and "PEM" not in shown and ".env" not in shown


async def test_git_show_and_status_leave_out_denied_files(repo) -> None:
    _, tools = repo
    shown = (await tools["git_show"].invoke({"rev": "HEAD"}, CTX)).content
    assert "return 2" in shown and "app.py" in shown
    assert "TOKEN" not in shown and "PEM" not in shown and "id.pem" not in shown
    status = (await tools["git_status"].invoke({}, CTX)).content
    assert "app.py" in status
    assert ".env" not in status and "keys" not in status


def test_git_tools_naming_a_denied_path_are_refused(tmp_path: Path) -> None:
    rules = RuleSet(deny=["Read(./.env)"])
    for tool_name in ("git_diff", "git_log"):
        request = ApprovalRequest("s", "a", "c", "t", tool_name, SideEffect.READ_ONLY,
                                  {"path": "./.env"})  # fmt: skip
        assert decide(request, PermissionMode.BYPASS_PERMISSIONS, rules, tmp_path).decision == (
            "deny"
        )


async def test_the_repo_map_and_symbols_never_show_a_denied_source_file(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def visible_function():\n    return 1\n")
    (tmp_path / "secret_algo.py").write_text("def proprietary_trick():\n    return 2\n")
    workspace = Workspace(tmp_path)
    workspace.hidden = read_denied(RuleSet(deny=["Read(secret_algo.py)"]), workspace.root)
    mapped = (await repo_map_tool(workspace).invoke({}, CTX)).content
    assert "visible_function" in mapped
    assert "proprietary_trick" not in mapped and "secret_algo" not in mapped
    found = (await symbols_tool(workspace).invoke({"name": "proprietary_trick"}, CTX)).content
    assert "secret_algo" not in found
    workspace.hidden = None  # the same cache, rules lifted: the file is mapped again
    assert "proprietary_trick" in (await repo_map_tool(workspace).invoke({}, CTX)).content


def test_a_bare_read_deny_takes_every_reading_tool_away() -> None:
    rules = RuleSet(deny=["Read"])
    for name in ("read", "grep", "git_diff", "git_show", "git_status", "repo_map", "symbols"):
        assert tool_hidden(name, rules), name
    assert not tool_hidden("bash", rules)


async def test_git_tools_leave_out_denied_files_whose_names_hold_newlines(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.invalid")
    git(tmp_path, "config", "user.name", "t")
    odd = tmp_path / "k\ney"
    odd.mkdir()
    (odd / "client.pem").write_text("PEM-SECRET-1\n")
    (tmp_path / "key.pem\n").write_text("PEM-SECRET-1b\n")
    (tmp_path / "app.py").write_text("x = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    (odd / "client.pem").write_text("PEM-SECRET-2\n")
    (tmp_path / "key.pem\n").write_text("PEM-SECRET-2b\n")
    workspace = Workspace(tmp_path)
    workspace.hidden = read_denied(RuleSet(deny=["Read(*.pem)"]), workspace.root)
    tools = {t.name: t for t in git_tools(workspace)}
    shown = (await tools["git_show"].invoke({"rev": "HEAD"}, CTX)).content
    diff = (await tools["git_diff"].invoke({}, CTX)).content
    assert "app.py" in shown
    for text in (shown, diff):
        assert "PEM-SECRET" not in text


def test_decide_matches_names_with_newlines(tmp_path: Path) -> None:
    request = ApprovalRequest("s", "a", "c", "t", "read", SideEffect.READ_ONLY,
                              {"path": "a\nb/key.pem"})  # fmt: skip
    verdict = decide(
        request, PermissionMode.BYPASS_PERMISSIONS, RuleSet(deny=["Read(*.pem)"]), tmp_path
    )
    assert verdict.decision == "deny"
