"""A run that a test kills with SIGKILL part-way (run as `python crash_worker.py DB SCENARIO DIR`).

The models and tools live here so the test process can resume the run with the very same ones.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import msgspec

from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import ops
from moot.protocol.messages import ToolResultMessage, UserMessage
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.store.sqlite import SQLiteStore
from moot.tools.base import SideEffect, tool


def tools(workdir: Path, *, block: bool) -> list:
    @tool(side_effect=SideEffect.WRITES_WORKSPACE)
    async def slow_write(name: str) -> str:
        """Record that it ran, then take a long time."""
        with (workdir / "ran.txt").open("a") as f:
            f.write(name + "\n")
        if block:
            await asyncio.sleep(60)  # the test kills the process here
        return f"wrote {name}"

    @tool(side_effect=SideEffect.READ_ONLY)
    def quick() -> str:
        """Answer at once."""
        return "42"

    return [slow_write, quick]


def log_requests(workdir: Path, model):
    """Wrap a model so every request's context is written down before it is answered."""

    async def logged(request: ModelRequest):
        record = {
            "agent": request.agent,
            "system": request.system,
            "tools": [t.name for t in request.tools],
            "messages": msgspec.to_builtins(tuple(request.messages)),
        }
        with (workdir / "requests.jsonl").open("a") as f:
            f.write(json.dumps(record) + "\n")
        return await model(request)

    return logged


def agents(scenario: str, workdir: Path, *, block: bool) -> list[Agent]:
    async def main_model(request: ModelRequest):
        last = request.messages[-1]
        if scenario == "background":  # three background helpers, each killed inside its tool
            if isinstance(last, UserMessage) and "[background agent" in last.content:
                return f"got {last.content.count('[background agent')}"
            if isinstance(last, ToolResultMessage):
                return "waiting for the helpers"
            return {
                "tool_calls": [
                    {
                        "name": "spawn_background_agent",
                        "arguments": {"agent_name": "helper", "message": name},
                    }
                    for name in ("b1", "b2", "b3")
                ]
            }
        if scenario == "message":  # a helper's message waits for main, blocked in its tool
            seen = [m.content for m in request.messages if isinstance(m, UserMessage)][1:]
            if any("[background agent" in text for text in seen):
                return "main read: " + " | ".join(seen)
            if len(request.messages) > 1:
                return "waiting"
            spawn = {"agent_name": "helper", "message": "h"}
            return {
                "tool_calls": [
                    {"name": "spawn_background_agent", "arguments": spawn},
                    {"name": "slow_write", "arguments": {"name": "m"}},
                ]
            }
        if scenario == "wait":  # main waits for a message that never comes, and is killed
            if isinstance(last, ToolResultMessage):
                return f"main done ({last.content[:11]})"
            return {"tool_calls": [{"name": "get_messages", "arguments": {"wait_seconds": 60}}]}
        if scenario == "starting":  # main and helper both got the prompt; each killed in a tool
            if isinstance(last, ToolResultMessage):
                return f"main done ({last.content[:11]})"
            return {"tool_calls": [{"name": "slow_write", "arguments": {"name": "m"}}]}
        if scenario == "tool":
            if isinstance(last, ToolResultMessage):
                return f"done: {last.content}"
            return {"tool_calls": [{"name": "slow_write", "arguments": {"name": "a"}}]}
        if scenario == "model":
            if isinstance(last, ToolResultMessage):
                if block:
                    await asyncio.sleep(60)  # killed while the model "streams"
                return f"the answer is {last.content}"
            return {"tool_calls": [{"name": "quick", "arguments": {}}]}
        # scenario == "peer": the helper is killed inside its tool
        if isinstance(last, ToolResultMessage):
            return f"helper said: {last.content}"
        return {
            "tool_calls": [
                {"name": "call_agent", "arguments": {"agent_name": "helper", "message": "write"}}
            ]
        }

    async def helper_model(request: ModelRequest):
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage) and last.name == "send_message":
            return {"tool_calls": [{"name": "slow_write", "arguments": {"name": "h"}}]}
        if isinstance(last, ToolResultMessage):
            return f"helper done ({last.content[:11]})"
        if scenario == "message" and len(request.messages) == 1:
            caller = request.system.split("your caller's is `")[1].split("`")[0]
            note = {"task_id": caller, "message": "note from helper"}
            return {"tool_calls": [{"name": "send_message", "arguments": note}]}
        first = request.messages[0]
        name = first.content if scenario == "background" and isinstance(first, UserMessage) else "h"
        return {"tool_calls": [{"name": "slow_write", "arguments": {"name": name}}]}

    return [
        Agent("main", model=FunctionProvider(log_requests(workdir, main_model))),
        Agent("helper", model=FunctionProvider(log_requests(workdir, helper_model))),
    ]


def runtime(db: Path, scenario: str, workdir: Path, *, block: bool, session_id=None) -> Runtime:
    return Runtime(
        agents(scenario, workdir, block=block),
        store=SQLiteStore(db),
        session_id=session_id,
        options=RuntimeOptions(
            tools=tools(workdir, block=block),
            allow_background_agents=scenario in ("background", "message"),
            peer_messages=scenario == "wait",
        ),
    )


async def main(db: Path, scenario: str, workdir: Path) -> None:
    rt = runtime(db, scenario, workdir, block=True)
    print(rt.session_id, flush=True)
    starting = ("main", "helper") if scenario == "starting" else ()
    rt.submit(ops.UserTurn(text="please do it", agents=starting))
    await rt.wait()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
