"""The built-in tools' generated specs (`builtin_specs.json`) and the lazy tools built on them.

The first model request reads every built-in tool's spec from generated data; each tool's
module is imported at its first call. These tests keep the data equal to what the tools
themselves say, and check that nothing is built before it is needed.
"""

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
from moot.tools import SideEffect, Tool, ToolContext, tool_spec
from moot.tools.builtin import builtin_tools
from moot.tools.builtin_specs import BASH_VARIANTS, SPECS_FILE
from moot.tools.exit_plan_mode import exit_plan_mode_tool
from moot.tools.exit_plan_mode_tool import build_exit_plan_mode
from moot.tools.lazy import LazyTool
from moot.tools.spec_gen import built_tools, generate_specs, render
from moot.workspace import Workspace

CTX = ToolContext(session_id="ses_1", run_id="run_1", call_id="c1", agent="a", tool_call_id="t1")


def described(tools: list[Tool]) -> list[tuple[dict[str, Any], SideEffect]]:
    return [(tool_spec(t), t.side_effect) for t in tools]


def test_the_checked_in_specs_match_the_tools() -> None:
    """Fails after a tool's parameters or description change: run `scripts/gen-tool-specs`."""
    assert SPECS_FILE.read_text(encoding="utf-8") == render(generate_specs()), (
        f"{SPECS_FILE.name} is out of date: run scripts/gen-tool-specs"
    )


@pytest.mark.parametrize("variant", BASH_VARIANTS)
def test_the_lazy_tools_say_what_the_built_tools_say(tmp_path: Path, variant: str) -> None:
    real = built_tools(variant)
    store = MemoryStore()
    session_id = store.create_session(title="", workspace=str(tmp_path)).id
    shell = SandboxChoice("auto", _sandbox_named(variant), "")

    lazy = builtin_tools(store, session_id, Workspace(tmp_path), shell, BackgroundShells())

    assert described(lazy) == described(real)
    assert all(isinstance(t, LazyTool) for t in lazy)


def _sandbox_named(variant: str) -> Any:
    if variant == "none":
        return None
    return type("Named", (), {"name": "host" if variant == "host" else "docker"})()


def test_no_tool_module_is_imported_before_its_first_call(tmp_path: Path) -> None:
    probe = f"""
import json, sys
from pathlib import Path
from moot.sandbox.background import BackgroundShells
from moot.sandbox.select import SandboxChoice
from moot.store.memory import MemoryStore
from moot.tools.builtin import builtin_tools
from moot.workspace import Workspace

store = MemoryStore()
session_id = store.create_session(title="", workspace="").id
shell = SandboxChoice("none", None, "")
tools = builtin_tools(store, session_id, Workspace({str(tmp_path)!r}), shell, BackgroundShells())
print(json.dumps(sorted(m for m in sys.modules if m.startswith("moot.tools."))))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )

    loaded = set(json.loads(done.stdout))
    assert loaded <= {
        "moot.tools.base",
        "moot.tools.builtin",
        "moot.tools.builtin_specs",
        "moot.tools.context",
        "moot.tools.lazy",
        "moot.tools.schema",
    }


async def test_a_lazy_tool_builds_the_real_tool_once_and_runs_it(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    store = MemoryStore()
    session_id = store.create_session(title="", workspace=str(tmp_path)).id
    workspace = Workspace(tmp_path)
    shell = SandboxChoice("none", None, "")
    tools = {
        t.name: t for t in builtin_tools(store, session_id, workspace, shell, BackgroundShells())
    }
    read = tools["read"]
    assert isinstance(read, LazyTool)

    first = await read.invoke({"path": "notes.txt"}, CTX)
    built = read.tool
    second = await read.invoke({"path": "notes.txt", "offset": 0}, CTX)

    assert (first.content, first.is_error) == ("    1\thello", False)
    assert read.tool is built
    assert second.is_error
    assert "offset" in second.content


async def test_a_tool_that_cannot_be_built_answers_with_an_error() -> None:
    def build() -> Tool:
        raise RuntimeError("no such module")

    broken = LazyTool("broken", "", {"type": "object"}, SideEffect.READ_ONLY, build)

    result = await broken.invoke({}, CTX)

    assert result.is_error
    assert result.content == "Tool broken failed: RuntimeError: no such module"


def test_exit_plan_mode_says_what_the_built_tool_says_and_is_built_at_its_first_call(
    tmp_path: Path,
) -> None:
    lazy = exit_plan_mode_tool()

    assert isinstance(lazy, LazyTool)
    assert described([lazy]) == described([build_exit_plan_mode()])
    assert "not built" in repr(lazy)
