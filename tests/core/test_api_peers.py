"""The Python API's peer options: pool and starting agents, run_background's handle, the trace."""

from __future__ import annotations

import asyncio

import pytest

from moot import (
    Agent,
    FunctionProvider,
    ScriptedProvider,
    async_run,
    format_trace,
    get_agent_status,
    run_background,
    send_message,
)
from moot.protocol import events as ev
from moot.protocol.messages import UserMessage
from moot.protocol.states import StopReason


async def test_a_starting_agent_outside_run_agents_is_left_out_with_a_warning() -> None:
    models = ScriptedProvider(agents={"a": ["from a"], "b": ["from b"]})
    a, b = Agent("a", model=models), Agent("b", model=models)
    with pytest.warns(UserWarning, match=r"\['b'\] are not in run_agents"):
        result = await async_run("go", starting_agents=[a, b], run_agents=[a])
    assert result.output == "from a"


async def test_the_trace_of_several_starting_agents_shows_each_under_the_person() -> None:
    models = ScriptedProvider(agents={"a": ["from a"], "b": ["from b"]})
    result = await async_run(
        "go", starting_agents=[Agent("a", model=models), Agent("b", model=models)]
    )
    lines = format_trace(result).splitlines()
    assert lines[0].startswith("user → a, b [run_") and lines[0].endswith("]: go")
    assert [line.split(" [")[0] for line in lines[1:5]] == [
        "  user → a",
        "  user → b",
        "  ← a completed: from a",
        "  ← b completed: from b",
    ] or [line.split(" [")[0] for line in lines[1:5]] == [
        "  user → a",
        "  ← a completed: from a",
        "  user → b",
        "  ← b completed: from b",
    ]
    assert lines[-1] == "← user completed: [a]from a[/a] [b]from b[/b]"


async def test_run_background_messages_reports_and_cancels_while_the_run_goes_on() -> None:
    helper_started = asyncio.Event()

    async def main_model(request):
        last = request.messages[-1]
        if isinstance(last, UserMessage) and "[background agent helper" in last.content:
            return "main saw: " + last.content.splitlines()[0]
        if len(request.messages) == 1:
            spawn = {"agent_name": "helper", "message": "dig"}
            return {"tool_calls": [{"name": "spawn_background_agent", "arguments": spawn}]}
        return "waiting"

    async def helper_model(request):
        helper_started.set()
        await asyncio.Event().wait()  # works until cancelled

    handle = await run_background(
        "go",
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
        ],
        allow_background_agents=True,
    )
    await helper_started.wait()
    with pytest.raises(LookupError, match="no running agent 'ghost'"):
        handle.send_message("ghost", "hello?")
    assert send_message(handle, "helper", "hurry").startswith(
        "Message sent to helper (task_id: call_"
    )
    helper_task = next(
        e.call_id
        for e in handle.runtime.store.events(handle.runtime.session_id)
        if isinstance(e, ev.AgentCalled)
    )
    assert "Status: running" in get_agent_status(handle, helper_task)
    handle.cancel(helper_task)
    result = await handle.result()
    assert result.output.startswith(
        f"main saw: [background agent helper (task {helper_task}) cancelled"
    )
    assert "Status: cancelled (user_cancelled)" in handle.status(helper_task)
    assert result.stop_reason is StopReason.COMPLETED
    trace = format_trace(result)
    assert f"  main → helper [{helper_task}] (background): dig" in trace
    assert "    message user → helper: hurry" in trace
    assert "  ← helper cancelled:" in trace
