"""The `shell_output` tool: what a background shell printed since the last look, and its state."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated

from pydantic import Field

from moot.sandbox.background import BackgroundShells, UnknownShell
from moot.sandbox.base import BackgroundProcess
from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool

MAX_WAIT = 60.0
_POLL = 0.1


def shell_output_tool(shells: BackgroundShells) -> FunctionTool:
    """The `shell_output` tool over the session's background shells."""

    @tool(
        name="shell_output",
        side_effect=SideEffect.READ_ONLY,
        description=(
            "New output of a background shell (started with bash run_in_background) since the"
            " last call, and whether it still runs. wait: seconds to wait for output or its end."
        ),
    )
    async def shell_output(
        shell_id: str,
        wait: Annotated[float, Field(ge=0, le=MAX_WAIT, description="Seconds, at most 60")] = 0,
    ) -> ToolResult:
        try:
            process = shells.get(shell_id)
        except UnknownShell as exc:
            return ToolResult.error(str(exc))
        text = await read_waiting(process, wait)
        return shell_report(process, text)

    return shell_output


async def read_waiting(process: BackgroundProcess, wait: float) -> str:
    """Its new output; waits up to `wait` seconds for some, or for its end, when there is none."""
    text = process.read()
    deadline = time.monotonic() + wait
    while not text and process.exit_code is None and time.monotonic() < deadline:
        await asyncio.sleep(_POLL)
        text = process.read()
    return text


def shell_report(process: BackgroundProcess, text: str) -> ToolResult:
    """Its state on the first line, then the output."""
    code = process.exit_code
    if code is None:
        state = "running"
    elif code < 0:
        state = f"killed (signal {-code})"
    else:
        state = f"exited with code {code}"
    body = text.rstrip("\n") if text else "(no new output)"
    return ToolResult(
        f"{process.id}: {state}\n{body}",
        display={"shell_id": process.id, "exit_code": code, "running": code is None},
    )
