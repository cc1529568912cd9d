"""`@tool` and `FunctionTool`: calling plain functions as tools, and the never-raise contract."""

from __future__ import annotations

import asyncio
import threading
from enum import Enum
from typing import Annotated, Any

import pytest
from pydantic import BaseModel

from moot.protocol.messages import Attachment
from moot.tools import (
    FunctionTool,
    SideEffect,
    Tool,
    ToolContext,
    ToolResult,
    tool,
    tool_spec,
)


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int = 0


def make_ctx(**overrides: Any) -> ToolContext:
    values: dict[str, Any] = {
        "session_id": "ses_1",
        "run_id": "run_1",
        "call_id": "call_1",
        "agent": "main",
        "tool_call_id": "toolu_1",
    }
    return ToolContext(**(values | overrides))


@tool(side_effect=SideEffect.READ_ONLY)
def read(path: Annotated[str, "File to read"], limit: int = 100) -> str:
    """Read a file.

    Args:
        limit: Most lines to return.
    """
    return f"{path}:{limit}"


# Decorator forms -------------------------------------------------------------------------------


def test_bare_decorator_defaults_to_the_conservative_side_effect() -> None:
    @tool
    def touch(path: str) -> None:
        """Create a file."""

    assert isinstance(touch, FunctionTool)
    assert touch.name == "touch"
    assert touch.description == "Create a file."
    assert touch.side_effect is SideEffect.WRITES_WORKSPACE


def test_decorator_with_options() -> None:
    @tool(name="grep-files", description="Search files.", side_effect=SideEffect.READ_ONLY)
    def grep(pattern: str) -> str:
        """Ignored, description was given."""
        return pattern

    assert (grep.name, grep.description, grep.side_effect) == (
        "grep-files",
        "Search files.",
        SideEffect.READ_ONLY,
    )


def test_empty_call_form_and_plain_function_call_both_work() -> None:
    @tool()
    def double(n: int) -> int:
        return n * 2

    assert double(4) == 8
    assert read("a.txt", limit=3) == "a.txt:3"
    assert read.__name__ == "read"
    assert read.__doc__ is not None


def test_function_tool_satisfies_the_tool_protocol() -> None:
    assert isinstance(read, Tool)


def test_tool_spec_is_what_providers_send() -> None:
    spec = tool_spec(read)
    assert spec == {
        "name": "read",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to read"},
                "limit": {
                    "type": "integer",
                    "description": "Most lines to return.",
                    "default": 100,
                },
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    }
    spec["parameters"]["properties"].clear()
    assert read.parameters["properties"], "a provider editing its spec must not edit the tool"


def test_names_providers_reject_fail_at_decoration_time() -> None:
    with pytest.raises(ValueError, match="pass name="):
        tool(lambda: None)
    assert tool(name="noop")(lambda: None).name == "noop"


def test_var_parameters_fail_at_decoration_time() -> None:
    with pytest.raises(TypeError, match=r"\*\*options"):

        @tool
        def configure(**options: str) -> None: ...


# Invoking --------------------------------------------------------------------------------------


async def test_sync_function_is_invoked_with_validated_arguments() -> None:
    result = await read.invoke({"path": "a.txt", "limit": "5"}, make_ctx())
    assert result == ToolResult("a.txt:5")


async def test_async_function_is_awaited() -> None:
    @tool
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        return url.upper()

    assert await fetch.invoke({"url": "x"}, make_ctx()) == ToolResult("X")


async def test_arguments_arrive_as_real_types() -> None:
    seen: list[Any] = []

    @tool
    def paint(at: Point, color: Color, ids: list[int], /) -> None:
        seen.extend([at, color, ids])

    result = await paint.invoke({"at": {"x": 1}, "color": "blue", "ids": ["1"]}, make_ctx())
    assert not result.is_error
    assert seen == [Point(x=1, y=0), Color.BLUE, [1]]
    assert isinstance(seen[0], Point)
    assert seen[1] is Color.BLUE


async def test_context_is_injected_and_emit_streams() -> None:
    emitted: list[str] = []

    @tool
    def build(target: str, ctx: ToolContext) -> str:
        ctx.emit(f"building {target}")
        return f"{ctx.agent}/{ctx.tool_call_id}"

    assert "ctx" not in build.parameters["properties"]
    result = await build.invoke({"target": "all"}, make_ctx(emit=emitted.append))
    assert result == ToolResult("main/toolu_1")
    assert emitted == ["building all"]


def test_default_emit_discards() -> None:
    make_ctx().emit("nobody listens")


# Bad arguments and failures --------------------------------------------------------------------


async def test_wrong_type_names_tool_field_and_value() -> None:
    result = await read.invoke({"path": "a.txt", "limit": "ten"}, make_ctx())
    assert result.is_error
    assert result.content.startswith("Invalid arguments for read: 'limit': ")
    assert "valid integer" in result.content
    assert "(got 'ten')" in result.content


async def test_missing_required_argument_is_named() -> None:
    result = await read.invoke({}, make_ctx())
    assert result == ToolResult.error("Invalid arguments for read: 'path': Field required")


async def test_unknown_argument_is_named() -> None:
    result = await read.invoke({"path": "a", "offset": 3}, make_ctx())
    assert result == ToolResult.error(
        "Invalid arguments for read: 'offset': Extra inputs are not permitted (got 3)"
    )


async def test_nested_bad_field_is_named_by_its_path() -> None:
    @tool
    def plot(points: list[Point]) -> None: ...

    result = await plot.invoke({"points": [{"x": 1}, {"x": "far"}]}, make_ctx())
    assert result.is_error
    assert "'points[1].x': " in result.content


async def test_arguments_that_are_not_an_object() -> None:
    result = await read.invoke(["a.txt"], make_ctx())  # type: ignore[arg-type]
    assert result == ToolResult.error("Invalid arguments for read: expected an object, got list")


async def test_exception_becomes_error_result() -> None:
    @tool
    def explode(reason: str) -> None:
        raise ValueError(reason)

    result = await explode.invoke({"reason": "no such file"}, make_ctx())
    assert result == ToolResult.error("Tool explode failed: ValueError: no such file")


async def test_async_exception_without_message() -> None:
    @tool
    async def explode() -> None:
        raise RuntimeError

    assert await explode.invoke({}, make_ctx()) == ToolResult.error(
        "Tool explode failed: RuntimeError"
    )


async def test_cancellation_propagates() -> None:
    @tool
    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await cancelled.invoke({}, make_ctx())


# Return values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "content"),
    [
        pytest.param("plain text", "plain text", id="str"),
        pytest.param(None, "", id="none"),
        pytest.param({"a": [1, 2], "b": None}, '{"a":[1,2],"b":null}', id="dict"),
        pytest.param([1, "two"], '[1,"two"]', id="list"),
        pytest.param(42, "42", id="int"),
        pytest.param(1.5, "1.5", id="float"),
        pytest.param(Point(x=1), '{"x":1,"y":0}', id="model"),
        pytest.param([Point(x=2)], '[{"x":2,"y":0}]', id="models-in-list"),
    ],
)
async def test_return_value_mapping(value: Any, content: str) -> None:
    @tool
    def give() -> Any:
        return value

    assert await give.invoke({}, make_ctx()) == ToolResult(content)


async def test_tool_result_and_attachments_pass_through() -> None:
    image = Attachment(mime_type="image/png", data="iVBORw0KGgo=", name="shot.png")
    returned = ToolResult("a screenshot", attachments=(image,))

    @tool
    async def screenshot() -> ToolResult:
        return returned

    result = await screenshot.invoke({}, make_ctx())
    assert result is returned
    assert result.attachments == (image,)


# Concurrency -----------------------------------------------------------------------------------


async def test_two_sync_tools_run_concurrently() -> None:
    barrier = threading.Barrier(2, timeout=5)

    @tool(side_effect=SideEffect.READ_ONLY)
    def meet(who: str) -> str:
        barrier.wait()  # only returns once both calls are running at the same time
        return who

    first, second = await asyncio.gather(
        meet.invoke({"who": "a"}, make_ctx()), meet.invoke({"who": "b"}, make_ctx())
    )
    assert (first, second) == (ToolResult("a"), ToolResult("b"))


async def test_sync_tool_does_not_block_the_event_loop() -> None:
    released = threading.Event()

    @tool
    def wait_for_loop() -> str:
        return "released" if released.wait(timeout=5) else "timed out"

    call = asyncio.create_task(wait_for_loop.invoke({}, make_ctx()))
    await asyncio.sleep(0)  # let the call start; the loop must stay free to run this task
    released.set()
    assert await call == ToolResult("released")
