"""Peers: any agent calls any other; calls run at once; budgets are shared downward."""

from __future__ import annotations

import asyncio

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.protocol import events as ev
from moot.protocol.messages import ToolResultMessage
from moot.protocol.states import RunState, StopReason
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from runtime_helpers import agent, call, make_runtime, of, run_turn


def answers_after_tools(text: str, *first: dict) -> FunctionProvider:
    """A model that makes `first` tool calls, then answers `text` once it sees results."""

    def model(request: ModelRequest) -> object:
        if isinstance(request.messages[-1], ToolResultMessage) or not first:
            return text
        return {"tool_calls": list(first)}

    return FunctionProvider(model)


async def test_one_call_returns_the_callee_text_tagged_with_forward_and_return_events() -> None:
    main = Agent(
        "main",
        model=answers_after_tools("relayed", call("call_agent", agent_name="helper", message="hi")),
    )
    helper = agent("helper", "hello from helper", role="helps")
    finished, events = await run_turn(make_runtime([main, helper]))
    (forward,) = of(events, ev.AgentCalled)
    (back,) = of(events, ev.AgentReturned)
    root = finished.call_id
    assert (forward.caller, forward.agent, forward.message, forward.depth) == (
        "main",
        "helper",
        "hi",
        1,
    )
    assert forward.parent_call_id == root and back.call_id == forward.call_id
    assert back.output == "hello from helper" and back.state is RunState.COMPLETED
    result = next(r for r in of(events, ev.ToolFinished) if r.tool == "call_agent")
    assert result.content == "[helper]hello from helper[/helper]"  # tagged, as several are
    # Every event of the callee carries its call id and its parent's.
    callee_events = [e for e in events if e.agent == "helper"]
    assert {(e.call_id, e.parent_call_id) for e in callee_events} == {(forward.call_id, root)}
    assert finished.output == "relayed"


async def test_a_callee_whose_provider_gives_up_tells_its_caller_why() -> None:
    main = Agent(
        "main",
        model=answers_after_tools("relayed", call("call_agent", agent_name="helper", message="hi")),
    )
    helper = agent("helper", {"error": "upstream 503 from the helper's model"})
    finished, events = await run_turn(make_runtime([main, helper]))

    result = next(r for r in of(events, ev.ToolFinished) if r.tool == "call_agent")
    assert result.is_error
    assert (
        result.content
        == "[helper]failed (provider_error): scripted: upstream 503 from the helper's model"
        "[/helper]"
    )
    assert finished.state is RunState.COMPLETED


async def test_several_calls_run_at_once_and_come_back_tagged() -> None:
    barrier = asyncio.Barrier(2)

    async def meeting_model(request: ModelRequest) -> str:
        # Both callees must be inside a model call at the same time to pass.
        await asyncio.wait_for(barrier.wait(), timeout=5)
        return f"{request.agent} was here"

    calls = [
        call("call_agent", agent_name="a", message="go"),
        call("call_agent", agent_name="b", message="go"),
    ]
    main = Agent("main", model=answers_after_tools("both done", *calls))
    a = Agent("a", model=FunctionProvider(meeting_model))
    b = Agent("b", model=FunctionProvider(meeting_model))
    finished, events = await run_turn(make_runtime([main, a, b]))
    results = sorted(r.content for r in of(events, ev.ToolFinished))
    assert results == ["[a]a was here[/a]", "[b]b was here[/b]"]
    assert finished.output == "both done"


async def test_the_roster_lists_every_peer_and_the_person() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> str:
        seen.append(request)
        return "ok"

    main = Agent("main", role="leads", model=FunctionProvider(model))
    critic = Agent("critic", role="finds faults", model=FunctionProvider(model))
    await run_turn(make_runtime([main, critic]))
    system = seen[0].system
    assert "- user: the person at the keyboard" in system
    assert "- main (you): leads" in system and "- critic: finds faults" in system
    call_agent = next(t for t in seen[0].tools if t.name == "call_agent")
    assert call_agent.parameters["properties"]["agent_name"]["enum"] == ["main", "critic"]
    # Peers can message each other (a callee its caller, anyone the person): the seed's tools.
    assert {t.name for t in seen[0].tools} == {
        "call_agent",
        "finish",
        "send_message",
        "get_messages",
    }
    assert "`send_message` to `user` reaches the person while you work." in system


async def test_a_lone_agent_is_offered_messages_only_when_someone_listens() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> str:
        seen.append(request)
        return "ok"

    await run_turn(make_runtime(Agent("main", model=FunctionProvider(model))))
    assert {t.name for t in seen[-1].tools} == {"call_agent", "finish"}
    assert "send_message" not in seen[-1].system
    await run_turn(make_runtime(Agent("main", model=FunctionProvider(model)), peer_messages=True))
    assert {t.name for t in seen[-1].tools} >= {"send_message", "get_messages"}
    both = [Agent("main", model=FunctionProvider(model)), Agent("critic", model="scripted:x")]
    await run_turn(make_runtime(both, disabled_tools=["send_message", "get_messages"]))
    assert {t.name for t in seen[-1].tools} == {"call_agent", "finish"}


async def test_a_callee_may_finish_with_the_finish_tool() -> None:
    main = Agent(
        "main",
        model=answers_after_tools("ok", call("call_agent", agent_name="helper", message="x")),
    )
    helper = agent("helper", {"tool_calls": [call("finish", message="finished explicitly")]})
    _, events = await run_turn(make_runtime([main, helper]))
    assert of(events, ev.AgentReturned)[0].output == "finished explicitly"


async def test_the_call_depth_limit_stops_runaway_recursion() -> None:
    recurse = call("call_agent", agent_name="main", message="deeper")
    main = Agent("main", model=answers_after_tools("bottom", recurse))
    runtime = make_runtime(main, limits=Limits(max_call_depth=2))
    finished, events = await run_turn(runtime)
    returns = of(events, ev.AgentReturned)
    depths = {e.call_id: e.depth for e in of(events, ev.AgentCalled)}
    stopped = [r for r in returns if r.stop_reason is StopReason.MAX_CALL_DEPTH]
    assert len(stopped) == 1 and depths[stopped[0].call_id] == 3
    assert stopped[0].state is RunState.STOPPED
    # The depth-2 caller hears about it as a tool error and carries on.
    errors = [r for r in of(events, ev.ToolFinished) if r.is_error]
    assert len(errors) == 1 and "max_call_depth" in errors[0].content
    assert finished.state is RunState.COMPLETED
    # No model call was made beyond depth 2.
    assert max(depths[e.call_id] for e in of(events, ev.ModelResponded) if e.call_id in depths) == 2


async def test_a_callee_spends_from_its_callers_budget() -> None:
    # The helper would look forever; the run's three turns are shared by both agents.
    main = Agent(
        "main",
        model=answers_after_tools(
            "never reached", call("call_agent", agent_name="helper", message="dig")
        ),
    )
    helper = Agent(
        "helper",
        model=FunctionProvider(lambda r: {"tool_calls": [call("finish_not", n=len(r.messages))]}),
    )
    runtime = make_runtime([main, helper], limits=Limits(max_turns=3, max_consecutive_errors=None))
    finished, events = await run_turn(runtime)
    assert len(of(events, ev.ModelResponded)) == 3
    (helper_return,) = of(events, ev.AgentReturned)
    assert helper_return.stop_reason is StopReason.MAX_TURNS
    assert (finished.state, finished.stop_reason) == (RunState.STOPPED, StopReason.MAX_TURNS)
    assert [e.agent for e in of(events, ev.LimitHit)] == ["helper", "main"]
