"""Background agents: the caller goes on at once; the callee's return arrives as a message."""

from __future__ import annotations

import asyncio

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import ToolResultMessage, UserMessage
from moot.protocol.states import RunState, StopReason
from moot.providers.base import ModelRequest, ToolSpec
from moot.providers.scripted import FunctionProvider
from moot.tools.base import SideEffect, tool
from runtime_helpers import agent, call, make_runtime, of, run_turn


def tool_names(request: ModelRequest) -> set[str]:
    return {t.name for t in request.tools}


async def test_a_background_result_arrives_after_the_caller_has_moved_on() -> None:
    helper_may_answer = asyncio.Event()
    order: list[str] = []

    @tool(side_effect=SideEffect.READ_ONLY)
    def note() -> str:
        """The caller goes on with its own work."""
        order.append("main went on")
        helper_may_answer.set()
        return "noted"

    async def main_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, UserMessage) and "[background agent helper" in last.content:
            return f"final: {last.content.splitlines()[-1]}"
        if isinstance(last, ToolResultMessage) and last.name == "call_agent":
            assert "task id" in last.content
            return {"tool_calls": [call("note")]}
        if isinstance(last, ToolResultMessage):
            return "my part is done"
        return {
            "tool_calls": [call("call_agent", agent_name="helper", message="dig", background=True)]
        }

    async def helper_model(request: ModelRequest) -> object:
        await helper_may_answer.wait()  # only once the caller has gone on
        order.append("helper answered")
        return "found it"

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
        ],
        tools=[note],
        allow_background_agents=True,
    )
    finished, events = await run_turn(runtime)
    assert finished.output == "final: found it"
    assert order == ["main went on", "helper answered"]
    (called,) = of(events, ev.AgentCalled)
    assert called.background
    (spawned,) = [e for e in of(events, ev.ToolFinished) if e.tool == "call_agent"]
    (returned,) = of(events, ev.AgentReturned)
    assert spawned.content.startswith(
        f"Started helper in the background; its task id is {called.call_id}"
    )
    assert spawned.seq < returned.seq  # the caller had its answer before the callee ended
    (delivered,) = of(events, ev.MessagesDelivered)
    assert delivered.call_id == finished.call_id and delivered.count == 1
    assert returned.seq < delivered.seq < finished.seq


async def test_background_agents_are_off_unless_the_run_allows_them() -> None:
    seen: list[set[str]] = []

    seen_specs: list[ToolSpec] = []

    def main_model(request: ModelRequest) -> object:
        seen.append(tool_names(request))
        seen_specs.extend(request.tools)
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        if results:
            return results[0].content
        return {"tool_calls": [call("spawn_background_agent", agent_name="helper", message="x")]}

    helper = agent("helper", "never asked")
    finished, events = await run_turn(
        make_runtime([Agent("main", model=FunctionProvider(main_model)), helper])
    )
    assert "spawn_background_agent" not in seen[0]
    call_agent = next(t for t in seen_specs if t.name == "call_agent")
    assert "background" not in call_agent.parameters["properties"]
    assert "spawn_background_agent is not offered" in finished.output
    assert not of(events, ev.AgentCalled)

    seen.clear()
    allowed = make_runtime(
        [Agent("main", model=FunctionProvider(main_model)), agent("helper", "hi")],
        allow_background_agents=True,
    )
    finished, events = await run_turn(allowed)
    assert {"spawn_background_agent", "send_message", "get_messages"} <= seen[0]
    (called,) = of(events, ev.AgentCalled)
    assert called.background and finished.state is RunState.COMPLETED


async def test_the_cap_on_live_background_agents_refuses_the_next_spawn() -> None:
    def main_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
            return " | ".join(r.content[:40] for r in results)
        if isinstance(last, UserMessage) and "[background agent" in last.content:
            return "collected"
        return {
            "tool_calls": [
                call("spawn_background_agent", agent_name="helper", message="one"),
                call("spawn_background_agent", agent_name="helper", message="two"),
            ]
        }

    runtime = make_runtime(
        [Agent("main", model=FunctionProvider(main_model)), agent("helper", "a", "b")],
        allow_background_agents=True,
        limits=Limits(max_background_agents=1),
    )
    _, events = await run_turn(runtime)
    results = [e for e in of(events, ev.ToolFinished) if e.tool == "spawn_background_agent"]
    assert [r.is_error for r in results] == [False, True]
    assert "1 background agents are already running" in results[1].content
    assert len(of(events, ev.AgentCalled)) == 1


async def test_background_agents_spend_from_the_callers_budget() -> None:
    def main_model(request: ModelRequest) -> object:
        if isinstance(request.messages[-1], ToolResultMessage):
            return "waiting"
        return {"tool_calls": [call("spawn_background_agent", agent_name="helper", message="go")]}

    def helper_model(request: ModelRequest) -> object:
        return {"tool_calls": [call("get_messages")]}  # works forever, turn after turn

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
        ],
        allow_background_agents=True,
        limits=Limits(max_turns=5, max_repeated_tool_calls=None, no_progress_window=None),
    )
    finished, events = await run_turn(runtime)
    (returned,) = of(events, ev.AgentReturned)
    assert returned.stop_reason is StopReason.MAX_TURNS
    assert len(of(events, ev.ModelResponded)) <= 6  # the run's five, shared by the subtree
    assert finished.turns == len(of(events, ev.ModelResponded))


async def test_cancelling_a_background_agent_cancels_its_subtree_and_the_caller_goes_on() -> None:
    started = asyncio.Event()

    @tool(side_effect=SideEffect.WRITES_WORKSPACE)
    async def long_job() -> str:
        """Runs until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    def main_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, UserMessage) and "[background agent" in last.content:
            return "helper was cancelled"
        if isinstance(last, ToolResultMessage):
            return "waiting for helper"
        return {"tool_calls": [call("spawn_background_agent", agent_name="helper", message="go")]}

    def helper_model(request: ModelRequest) -> object:
        if isinstance(request.messages[-1], ToolResultMessage):
            return "unreachable"
        return {"tool_calls": [call("call_agent", agent_name="worker", message="work")]}

    def worker_model(request: ModelRequest) -> object:
        return {"tool_calls": [call("long_job")]}

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
            Agent("worker", model=FunctionProvider(worker_model)),
        ],
        tools=[long_job],
        allow_background_agents=True,
    )
    events_seen = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    await started.wait()
    logged = runtime.store.events(runtime.session_id)
    (helper_call,) = [e for e in of(logged, ev.AgentCalled) if e.agent == "helper"]
    runtime.submit(ops.CancelAgent(task_id=helper_call.call_id))
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    events = [e async for e in events_seen]
    assert finished.output == "helper was cancelled" and finished.state is RunState.COMPLETED
    interrupted = [e for e in of(events, ev.ToolFinished) if e.interrupted]
    assert [e.tool for e in interrupted] == ["long_job", "call_agent"]  # the worker's, the helper's
    returns = {e.agent: e.stop_reason for e in of(events, ev.AgentReturned)}
    assert returns == {"worker": StopReason.USER_CANCELLED, "helper": StopReason.USER_CANCELLED}
    worker_end = next(e for e in of(events, ev.AgentReturned) if e.agent == "worker")
    helper_end = next(e for e in of(events, ev.AgentReturned) if e.agent == "helper")
    assert interrupted[0].seq < worker_end.seq < helper_end.seq


async def test_cancelling_a_callee_its_caller_waits_for_ends_it_alone_and_the_caller_goes_on() -> (
    None
):
    started = asyncio.Event()

    @tool(side_effect=SideEffect.WRITES_WORKSPACE)
    async def long_job() -> str:
        """Runs until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    def main_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            return f"main read: {last.content}"
        return {"tool_calls": [call("call_agent", agent_name="worker", message="work")]}

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            agent("worker", {"tool_calls": [call("long_job")]}),
        ],
        tools=[long_job],
    )
    runtime.submit(ops.UserTurn(text="go"))
    await started.wait()
    (worker,) = of(runtime.store.events(runtime.session_id), ev.AgentCalled)
    runtime.submit(ops.CancelAgent(task_id=worker.call_id))
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    assert finished.state is RunState.COMPLETED
    assert finished.output == "main read: [worker]cancelled (user_cancelled)[/worker]"
    events = runtime.store.events(runtime.session_id)
    (returned,) = of(events, ev.AgentReturned)
    assert returned.stop_reason is StopReason.USER_CANCELLED
    assert [e.tool for e in of(events, ev.ToolFinished) if e.interrupted] == ["long_job"]
