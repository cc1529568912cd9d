"""A tool whose schema is known ahead settles a plain call without pydantic, and any other call
exactly as pydantic did (`moot.tools.quick_args`, `FunctionTool(parameters=...)`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moot.sandbox.background import BackgroundShells
from moot.sandbox.select import SandboxChoice
from moot.store.memory import MemoryStore
from moot.tools import ToolContext
from moot.tools.builtin import builtin_tools
from moot.tools.builtin_specs import load_specs
from moot.tools.quick_args import plain_arguments
from moot.tools.read import read_tool
from moot.workspace import Workspace

CTX = ToolContext(session_id="ses_1", run_id="run_1", call_id="c1", agent="a", tool_call_id="t1")


def test_reading_and_editing_a_file_loads_no_pydantic(tmp_path: Path) -> None:
    """`moot -p` waited ~70 ms for pydantic and two argument models between the model's first
    answer and its next request; a plain read and edit need neither."""
    (tmp_path / "notes.txt").write_text("hello wrold\n")
    probe = f"""
import asyncio, json, sys
from moot.sandbox.background import BackgroundShells
from moot.sandbox.select import SandboxChoice
from moot.store.memory import MemoryStore
from moot.tools import ToolContext
from moot.tools.builtin import builtin_tools
from moot.workspace import Workspace

store = MemoryStore()
session_id = store.create_session(title="", workspace="").id
shell = SandboxChoice("none", None, "")
tools = {{t.name: t for t in builtin_tools(
    store, session_id, Workspace({str(tmp_path)!r}), shell, BackgroundShells())}}
ctx = ToolContext(session_id=session_id, run_id="run_1", call_id="c1", agent="a",
                  tool_call_id="t1")
async def main():
    read = await tools["read"].invoke({{"path": "notes.txt"}}, ctx)
    edit = await tools["edit"].invoke({{"path": "notes.txt", "old": "wrold", "new": "world"}}, ctx)
    return [read.is_error, edit.is_error]
errors = asyncio.run(main())
heavy = {{"pydantic", "pydantic_core", "annotated_types"}}
print(json.dumps([errors, sorted(m for m in sys.modules if m.split(".")[0] in heavy)]))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )

    errors, pydantic = json.loads(done.stdout)
    assert errors == [False, False]
    assert (tmp_path / "notes.txt").read_text() == "hello world\n"
    assert pydantic == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "notes.txt", "offset": "2"},  # pydantic coerces the string
        {"path": "notes.txt", "offset": 0},  # below the minimum
        {"path": "notes.txt", "offset": True},  # a bool is not a line number
        {"path": "notes.txt", "limit": 1.0},  # pydantic takes a whole float
        {"path": "notes.txt", "extra": 1},
        {"offset": 2},
        {"path": 7},
    ],
)
async def test_any_other_call_is_settled_as_pydantic_settles_it(
    tmp_path: Path, arguments: dict[str, Any]
) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    workspace = Workspace(tmp_path)
    known = read_tool(workspace, load_specs()["read"]["parameters"])
    built = read_tool(workspace)

    assert await known.invoke(arguments, CTX) == await built.invoke(arguments, CTX)


def test_only_exact_values_within_bounds_are_plain() -> None:
    schema = load_specs()["read"]["parameters"]
    grep = load_specs()["grep"]["parameters"]

    assert plain_arguments({"path": "a", "offset": 2, "limit": 5}, schema)
    assert plain_arguments({"path": "a"}, schema)
    assert not plain_arguments({"path": "a", "offset": 0}, schema)
    assert not plain_arguments({"path": "a", "offset": "2"}, schema)
    assert not plain_arguments({"path": "a", "offset": True}, schema)
    assert not plain_arguments({"path": "a", "other": 1}, schema)
    assert not plain_arguments({"offset": 1}, schema)
    assert plain_arguments({"pattern": "x", "glob": None}, grep)
    assert plain_arguments({"pattern": "x", "glob": "*.py"}, grep)
    assert not plain_arguments({"pattern": "x", "glob": 3}, grep)


async def test_the_built_in_file_tools_answer_as_before(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello wrold\n")
    store = MemoryStore()
    session_id = store.create_session(title="", workspace=str(tmp_path)).id
    shell = SandboxChoice("none", None, "")
    tools = {
        t.name: t
        for t in builtin_tools(store, session_id, Workspace(tmp_path), shell, BackgroundShells())
    }

    read = await tools["read"].invoke({"path": "notes.txt", "limit": 1}, CTX)
    edit = await tools["edit"].invoke(
        {"path": "notes.txt", "old": "wrold", "new": "world", "replace_all": False}, CTX
    )
    write = await tools["write"].invoke({"path": "new.txt", "content": "hi\n"}, CTX)

    assert (read.content, read.is_error) == ("    1\thello wrold", False)
    assert not edit.is_error and not write.is_error
    assert (tmp_path / "notes.txt").read_text() == "hello world\n"
    assert (tmp_path / "new.txt").read_text() == "hi\n"
