"""A `Read(...)` deny hides its paths from glob, ls and grep (ripgrep and the fallback)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from moot.permissions.rules import RuleSet, read_denied
from moot.tools.base import ToolContext
from moot.tools.glob import glob_tool
from moot.tools.grep import grep_tool
from moot.tools.ls import ls_tool
from moot.workspace.paths import Workspace

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
    if use_ripgrep and shutil.which("rg") is None:
        if os.environ.get("CI"):
            pytest.fail("ripgrep (rg) is not installed; .ci/run must install it")
        pytest.skip("ripgrep (rg) is not installed")
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
