"""Values from code outside the runtime's control (tools, library callers) in events and ops:
what is stored is what reads back, and what cannot be stored fails cleanly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Usage
from moot.protocol.states import RunState, StopReason
from moot.store.sqlite import SQLiteStore
from moot.tools.base import SideEffect, ToolContext, ToolResult, tool
from runtime_helpers import agent, call, of, run_turn


class Item(BaseModel):
    name: str
    done: bool = False


@tool(side_effect=SideEffect.READ_ONLY)
def items() -> ToolResult:
    """List the items."""
    return ToolResult("2 items", display={"items": [Item(name="a"), Item(name="b", done=True)]})


@tool(side_effect=SideEffect.READ_ONLY)
def opaque() -> ToolResult:
    """Return something no event can hold."""
    return ToolResult("done", display={"handle": object()})


def sqlite_runtime(tmp_path: Path, tool_name: str, tools: list) -> Runtime:
    main = agent("main", {"tool_calls": [call(tool_name)]}, "finished")
    options = RuntimeOptions(tools=tools)
    return Runtime([main], store=SQLiteStore(tmp_path / "s.db"), options=options)


async def test_a_pydantic_model_in_a_tools_display_is_stored_as_its_json(tmp_path: Path) -> None:
    runtime = sqlite_runtime(tmp_path, "items", [items])
    finished, events = await run_turn(runtime)

    assert finished.state == RunState.COMPLETED
    expected = {"items": [{"name": "a", "done": False}, {"name": "b", "done": True}]}
    assert of(events, ev.ToolFinished)[0].display == expected
    reread = SQLiteStore(tmp_path / "s.db").events(runtime.session_id)
    assert of(reread, ev.ToolFinished)[0].display == expected


async def test_a_value_no_event_can_hold_fails_the_run_cleanly(tmp_path: Path) -> None:
    runtime = sqlite_runtime(tmp_path, "opaque", [opaque])
    finished, events = await run_turn(runtime)

    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.INTERNAL_ERROR)
    assert "rule f" in of(events, ev.Error)[0].message
    assert "cannot hold a object" in of(events, ev.Error)[0].message
    reread = SQLiteStore(tmp_path / "s.db").events(runtime.session_id)
    assert [e.kind for e in reread] == [e.kind for e in events]


async def test_an_op_of_the_wrong_shape_is_refused_at_submit_and_starts_nothing(
    tmp_path: Path,
) -> None:
    runtime = sqlite_runtime(tmp_path, "items", [items])

    with pytest.raises(ValueError, match=r"Expected `str`, got `int` - at `\$.text`"):
        runtime.submit(ops.UserTurn(text=5))  # type: ignore[arg-type]

    assert await runtime.wait() is None
    assert SQLiteStore(tmp_path / "s.db").events(runtime.session_id) == []
    finished, _ = await run_turn(runtime, "go")  # the runtime is still usable
    assert finished.state == RunState.COMPLETED


class Markup(str):
    """A `str` subclass, as HTML libraries return."""


@tool(side_effect=SideEffect.READ_ONLY)
def odd_text(ctx: ToolContext) -> ToolResult:
    """Answer in every odd kind of text."""
    ctx.emit(b"raw bytes from a pipe\n")  # type: ignore[arg-type]
    ctx.emit(Markup("marked up\n"))
    name = os.fsdecode(b"caf\xe9.txt")  # a file name that is not UTF-8: a lone surrogate
    return ToolResult(Markup(f"listed {name}"), display={"n": Count(3), "title": Markup("t")})


class Count(int):
    """An `int` subclass."""


async def test_odd_text_from_a_tool_is_stored_as_text_the_log_reads_back(tmp_path: Path) -> None:
    runtime = sqlite_runtime(tmp_path, "odd_text", [odd_text])
    finished, events = await run_turn(runtime)

    assert finished.state == RunState.COMPLETED
    assert [e.text for e in of(events, ev.ToolOutput)] == ["raw bytes from a pipe\n", "marked up\n"]
    result = of(events, ev.ToolFinished)[0]
    assert result.content == "listed caf\\xe9.txt"
    assert result.display == {"n": 3, "title": "t"}
    reread = SQLiteStore(tmp_path / "s.db").events(runtime.session_id)
    assert of(reread, ev.ToolFinished)[0] == result


def test_bytes_where_text_belongs_are_refused_not_stored_as_base64() -> None:
    with pytest.raises(ValueError, match="bytes in `text`"):
        ops.checked(ops.UserTurn(text=b"hello"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bytes in `text`"):
        ev.checked_json(ev.TextDelta(text=b"hello"))  # type: ignore[arg-type]
    assert ops.checked(ops.UserTurn(text=Markup("hi"))).text == "hi"


def test_the_session_events_that_answer_ops_read_back_from_the_log(tmp_path: Path) -> None:
    """What answers an `Interrupt` of the person's tools, a `RestoreFiles` and the MCP ops is
    stored as it reads back (lists where tuples belong become the tuples)."""
    from msgspec.structs import replace

    store = SQLiteStore(tmp_path / "s.db")
    session = store.create_session(title="t", workspace=str(tmp_path)).id
    answers = [
        ev.RunToolsInterrupted(tools=["bash"], submissions=["sub_1"], submission_id="sub_2"),  # type: ignore[arg-type]
        ev.FilesRestored(before_run="run_1", restored=["a.py", "ü/b"], failures=["c: gone"]),  # type: ignore[arg-type]
        ev.McpServerApproved(server="repo", note="approved repo (node x)"),
        ev.McpServerRestarted(server="repo", note="restarting repo"),
        ev.McpQuestionAsked(ask_id="ask_1", server="s", message="?", schema={"required": ["a"]}),
        ev.McpQuestionAnswered(ask_id="ask_1", server="s", action="cancel", by="session"),
        ev.McpSampled(server="s", model="m", usage=Usage(input_tokens=3), cost_usd=0.1),
    ]
    stored = [store.append(replace(event, session_id=session)) for event in answers]
    assert SQLiteStore(tmp_path / "s.db").events(session) == stored
    assert stored[0].tools == ("bash",) and stored[1].restored == ("a.py", "ü/b")  # type: ignore[union-attr]
