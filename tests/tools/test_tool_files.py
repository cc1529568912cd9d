"""All workspace file tools together: names, side effects, schema size, and never raising."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.tools.base import SideEffect, Tool, ToolContext, tool_spec
from moot.tools.files import file_tools
from moot.workspace import Workspace

CTX = ToolContext("s", "r", "c", "main", "t")
MAX_SCHEMA_BYTES = 1024


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "a.txt").write_text("a\n")
    return Workspace(tmp_path)


def test_the_tools_and_what_they_touch(ws: Workspace) -> None:
    tools = file_tools(ws)
    assert all(isinstance(t, Tool) for t in tools)
    assert {t.name: t.side_effect for t in tools} == {
        "read": SideEffect.READ_ONLY,
        "glob": SideEffect.READ_ONLY,
        "grep": SideEffect.READ_ONLY,
        "ls": SideEffect.READ_ONLY,
        "write": SideEffect.WRITES_WORKSPACE,
        "edit": SideEffect.WRITES_WORKSPACE,
        "multi_edit": SideEffect.WRITES_WORKSPACE,
    }


def test_schemas_stay_small(ws: Workspace) -> None:
    sizes = {t.name: len(json.dumps(tool_spec(t), separators=(",", ":"))) for t in file_tools(ws)}
    assert all(size <= MAX_SCHEMA_BYTES for size in sizes.values()), sizes
    assert sum(sizes.values()) <= 3 * MAX_SCHEMA_BYTES, sizes
    for t in file_tools(ws):
        assert len(t.description) <= 100 and t.description.endswith("."), t.name


def test_two_workspaces_do_not_share_a_ledger(tmp_path: Path) -> None:
    first = Workspace(tmp_path)
    second = Workspace(tmp_path)
    (tmp_path / "f.txt").write_text("x\n")
    read = {t.name: t for t in file_tools(first)}["read"]
    write_second = {t.name: t for t in file_tools(second)}["write"]
    read.fn(path="f.txt")
    assert write_second.fn(path="f.txt", content="y\n").is_error  # read in the other session


BAD_PATHS = ["", "\x00", "../x", "/etc/passwd", "a.txt/child", ".git/x"]


@pytest.mark.parametrize("path", BAD_PATHS)
async def test_no_tool_raises_on_a_bad_path(ws: Workspace, path: str) -> None:
    arguments = {
        "read": {"path": path},
        "glob": {"pattern": "*", "path": path},
        "grep": {"pattern": "a", "path": path},
        "ls": {"path": path},
        "write": {"path": path, "content": "x"},
        "edit": {"path": path, "old": "a", "new": "b"},
        "multi_edit": {"path": path, "edits": [{"old": "a", "new": "b"}]},
    }
    for t in file_tools(ws):
        result = await t.invoke(arguments[t.name], CTX)
        assert not result.content.startswith("Tool "), (t.name, result.content)  # not a crash
        if path != ".git/x" or t.side_effect is SideEffect.WRITES_WORKSPACE:
            assert result.is_error, (t.name, path, result.content)
    assert sorted(p.name for p in ws.root.iterdir()) == ["a.txt"]
