"""Several starting agents, the pool, history passing, extra instructions, disabled and
replaced built-in tools."""

from __future__ import annotations

import asyncio

import pytest

from moot.core.agent import Agent
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import ToolResultMessage, UserMessage
from moot.protocol.states import RunState
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.testing import drive_turn
from moot.tools.base import tool
from runtime_helpers import agent, call, make_runtime, of, run_turn


async def test_starting_agents_get_the_message_at_once_and_their_results_are_tagged() -> None:
    barrier = asyncio.Barrier(3)  # hangs unless all three are asked at the same time

    def peer(name: str) -> Agent:
        async def model(request: ModelRequest) -> object:
            await barrier.wait()
            return f"{name} read {request.messages[-1].content}"

        return Agent(name, model=FunctionProvider(model))

    runtime = make_runtime([peer("researcher"), peer("writer"), peer("reviewer")])
    outcome = await drive_turn(runtime, "AI trends", agents=("researcher", "writer", "reviewer"))
    finished, events = outcome.finished, outcome.events
    assert finished.output == (
        "[researcher]researcher read AI trends[/researcher]\n"
        "[writer]writer read AI trends[/writer]\n"
        "[reviewer]reviewer read AI trends[/reviewer]"
    )
    (started,) = of(events, ev.TurnStarted)
    assert started.agent == "user" and started.starting_agents == (
        "researcher",
        "writer",
        "reviewer",
    )
    calls = of(events, ev.AgentCalled)
    assert [(c.caller, c.agent, c.depth) for c in calls] == [
        ("user", "researcher", 1),
        ("user", "writer", 1),
        ("user", "reviewer", 1),
    ]
    assert finished.state is RunState.COMPLETED


async def test_a_second_turn_with_starting_agents_hands_its_own_prompt_to_them() -> None:
    """The person's own call answers with the results of its own turn, not with those its
    conversation holds from the turn before (it answered the second turn with the first's)."""

    def peer(name: str) -> Agent:
        def model(request: ModelRequest) -> object:
            return f"{name} read {request.messages[-1].content}"

        return Agent(name, model=FunctionProvider(model))

    runtime = make_runtime([peer("researcher"), peer("writer")])
    for prompt in ("AI trends", "the budget"):
        outcome = await drive_turn(runtime, prompt, agents=("researcher", "writer"))
    assert outcome.finished.output == (
        "[researcher]researcher read the budget[/researcher]\n"
        "[writer]writer read the budget[/writer]"
    )
    assert len(of(outcome.events, ev.AgentCalled)) == 2


async def test_a_starting_agent_outside_the_pool_is_refused() -> None:
    runtime = make_runtime([agent("a", "x"), agent("b", "y")])
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="go", agents=("a", "ghost")))
    refused = await anext(aiter(events))
    assert isinstance(refused, ev.OpRefused) and "no agent 'ghost'" in refused.reason
    assert not runtime.running


@pytest.mark.parametrize(
    ("scope", "expected"),
    [("entry", {"main": True, "helper": False}), ("all", {"main": True, "helper": True})],
)
async def test_extra_instructions_reach_the_entry_agent_or_every_agent(
    scope: str, expected: dict[str, bool]
) -> None:
    systems: dict[str, str] = {}

    def model(request: ModelRequest) -> object:
        systems[request.agent] = request.system
        if request.agent == "main" and not isinstance(request.messages[-1], ToolResultMessage):
            return {"tool_calls": [call("call_agent", agent_name="helper", message="x")]}
        return "ok"

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(model)),
            Agent("helper", model=FunctionProvider(model)),
        ],
        extra_instructions="Write like SOUL.md says.",
        extra_scope=scope,
    )
    await run_turn(runtime)
    seen = {
        name: "ADDITIONAL INSTRUCTIONS:\nWrite like SOUL.md says." in s
        for name, s in systems.items()
    }
    assert seen == expected, scope


async def test_disabled_tools_are_not_offered_and_finish_cannot_be_disabled() -> None:
    offered: list[set[str]] = []

    def model(request: ModelRequest) -> object:
        offered.append({t.name for t in request.tools})
        return "done"

    runtime = make_runtime(
        Agent("main", model=FunctionProvider(model)),
        allow_background_agents=True,
        disabled_tools=("spawn_background_agent", "get_messages"),
    )
    await run_turn(runtime)
    assert offered == [{"call_agent", "send_message", "finish"}]
    with pytest.raises(ValueError, match="finish cannot be disabled"):
        make_runtime(agent("main", "x"), disabled_tools=("finish",))


async def test_a_tool_named_like_a_builtin_replaces_it() -> None:
    @tool
    def finish(message: str, confidence: float = 1.0) -> str:
        """Return the result with a confidence score."""
        return f"[{confidence}] {message}"

    main = agent(
        "main", {"tool_calls": [call("finish", message="Analysis complete", confidence=0.85)]}
    )
    finished, _ = await run_turn(make_runtime(main, tools=[finish]))
    assert finished.output == "[0.85] Analysis complete"


@pytest.mark.parametrize("passing", [True, False])
async def test_history_passing_lets_a_callee_see_its_earlier_exchange_with_that_caller(
    passing: bool,
) -> None:
    seen: list[list[str]] = []

    def main_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage):
            return last.content
        return {"tool_calls": [call("call_agent", agent_name="helper", message=last.content)]}

    def helper_model(request: ModelRequest) -> object:
        seen.append([m.content for m in request.messages if isinstance(m, UserMessage)])
        return f"noted {request.messages[-1].content}"

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
        ],
        pass_history=passing,
    )
    await run_turn(runtime, "first")
    await run_turn(runtime, "second")
    expected = [["first"], ["first", "second"]] if passing else [["first"], ["second"]]
    assert seen == expected, passing


def test_the_context_report_counts_the_peer_tools_the_run_offers() -> None:
    def tools_part(**options: object) -> str:
        runtime = make_runtime([agent("main", "x"), agent("helper", "y")], **options)
        (part,) = [p for p in runtime.context_parts() if p.name == "tools"]
        return part.detail

    assert tools_part() == "4 tool schemas"  # call_agent, finish, send_ and get_messages
    assert tools_part(allow_background_agents=True) == "5 tool schemas"
    assert tools_part(allow_background_agents=True, disabled_tools=("get_messages",)) == (
        "4 tool schemas"
    )


async def test_the_context_report_counts_exactly_the_tools_the_request_carries() -> None:
    """`/context` and a request share one rule (`peers.offered_specs`): an agent given a list
    of tools is offered only those, and a tool of its own named like a peer tool replaces it.
    (The report once counted `call_agent` for an agent not given it, and every shared tool.)"""

    @tool
    def read(path: str) -> str:
        """Read a file."""
        return path

    @tool
    def get_messages() -> str:
        """The agent's own get_messages."""
        return ""

    sent: list[ModelRequest] = []

    def model(request: ModelRequest) -> str:
        sent.append(request)
        return "done"

    lister = Agent("lister", model=FunctionProvider(model), given_tools=("read", "send_message"))
    owner = Agent("owner", model=FunctionProvider(model), tools=(get_messages,))
    for chosen in (lister, owner):
        runtime = make_runtime([chosen, agent("other", "x")], tools=[read])
        (part,) = [p for p in runtime.context_parts() if p.name == "tools"]
        sent.clear()
        await run_turn(runtime)
        offered = sorted(s.name for s in sent[0].tools)
        assert part.detail == f"{len(offered)} tool schemas", (chosen.name, offered)
    assert offered == sorted(["call_agent", "finish", "get_messages", "read", "send_message"])


async def test_a_starting_agent_messaging_its_caller_reaches_the_person_and_the_run_ends() -> None:
    """The person's own call has no model: a message to it (its task id, or `user`, which
    its starting agents are told) is a message to the person. On the old code one stayed in
    that call's inbox for ever, and the run spun without yielding."""
    run_ids: list[str] = []

    def model(request: ModelRequest) -> object:
        if isinstance(request.messages[-1], ToolResultMessage):
            return f"{request.agent} done"
        if request.agent == "b":
            return "b done"
        caller = request.system.split("your caller's is `")[1].split("`")[0]
        return {
            "tool_calls": [
                call("send_message", task_id=caller, message="by what I was told"),
                call("send_message", task_id=run_ids[0], message="by the call's id"),
            ]
        }

    models = FunctionProvider(model)
    runtime = make_runtime([Agent("a", model=models), Agent("b", model=models)])
    runtime.listeners.append(
        lambda e: run_ids.append(e.call_id) if isinstance(e, ev.TurnStarted) else None
    )
    outcome = await asyncio.wait_for(
        drive_turn(runtime, "go", agents=("a", "b")), timeout=10
    )  # fmt: skip
    sent = of(outcome.events, ev.MessageSent)
    assert [(m.to_agent, m.to_call_id, m.text) for m in sent] == [
        ("user", None, "by what I was told"),
        ("user", None, "by the call's id"),
    ]
    assert outcome.finished.output == "[a]a done[/a]\n[b]b done[/b]"
