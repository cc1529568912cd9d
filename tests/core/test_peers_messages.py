"""Messages between peers while they run, the person included; read at the receiver's next step."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from moot.commands.builtin import builtin_commands
from moot.commands.registry import CommandError
from moot.core.agent import Agent
from moot.core.fold import RunFold
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.core.trace import agent_status, format_trace
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import ToolResultMessage, UserMessage
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider, ScriptedProvider
from moot.store.sqlite import SQLiteStore
from moot.tools.base import SideEffect, tool
from runtime_helpers import agent, call, make_runtime, of, run_turn


class Said:
    """The part of a `CommandContext` that /msg uses: a client, and what it says."""

    def __init__(self, client: object) -> None:
        self.client = client
        self.said: list[str] = []

    shows_refusals = False  # says what the session refused

    def say(self, text: str, **_: object) -> None:
        self.said.append(text)


def blocking_tool(started: asyncio.Event, release: asyncio.Event):
    @tool(side_effect=SideEffect.READ_ONLY)
    async def think() -> str:
        """Takes a while."""
        started.set()
        await release.wait()
        return "thought"

    return think


def main_reading_messages(request: ModelRequest) -> object:
    last = request.messages[-1]
    if isinstance(last, UserMessage) and "[message from" in last.content:
        return f"read: {last.content}"
    if isinstance(last, ToolResultMessage):
        return "no message came"
    return {"tool_calls": [call("think")]}


async def test_the_person_messages_a_running_agent_which_reads_it_at_its_next_step() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    runtime = make_runtime(
        Agent("main", model=FunctionProvider(main_reading_messages)),
        tools=[blocking_tool(started, release)],
    )
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    await started.wait()
    context = Said(runtime)
    await builtin_commands().get("msg").run(context, "main also check the tests")
    release.set()
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    seen = [e async for e in events]
    assert finished.output == "read: [message from user]\nalso check the tests"
    (sent,) = of(seen, ev.MessageSent)
    assert (sent.sender, sent.to_agent, sent.to_call_id) == ("user", "main", finished.call_id)
    assert context.said == [f"message to main ({finished.call_id}): read at its next step"]
    (delivered,) = of(seen, ev.MessagesDelivered)
    think_done = next(e for e in of(seen, ev.ToolFinished) if e.tool == "think")
    assert sent.seq < think_done.seq < delivered.seq  # read at the next step, not mid-tool


async def test_a_message_to_no_running_agent_is_refused() -> None:
    runtime = make_runtime(agent("main", "hi"))
    with pytest.raises(CommandError, match="no running agent 'main'"):
        await builtin_commands().get("msg").run(Said(runtime), "main hello")
    with pytest.raises(CommandError, match="/msg AGENT TEXT"):
        await builtin_commands().get("msg").run(Said(runtime), "main")


async def test_an_agent_messages_the_person_and_its_caller() -> None:
    def main_model(request: ModelRequest) -> object:
        if len(request.messages) > 1:
            texts = [m.content for m in request.messages if isinstance(m, UserMessage)]
            return " / ".join(texts[1:]) or "waiting"
        return {"tool_calls": [call("spawn_background_agent", agent_name="helper", message="go")]}

    def helper_model(request: ModelRequest) -> object:
        if isinstance(request.messages[-1], ToolResultMessage):
            return "helper done"
        caller_task = request.system.split("your caller's is `")[1].split("`")[0]
        return {
            "tool_calls": [
                call("send_message", task_id="user", message="halfway"),
                call("send_message", task_id=caller_task, message="50% for you"),
            ]
        }

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
        ],
        allow_background_agents=True,
    )
    finished, events = await run_turn(runtime)
    to_person, to_main = of(events, ev.MessageSent)
    assert (to_person.to_agent, to_person.to_call_id, to_person.text) == ("user", None, "halfway")
    assert (to_main.to_agent, to_main.to_call_id) == ("main", finished.call_id)
    assert to_main.sender == "helper"
    # Both the helper's message and its return reached main, in the order they were sent.
    assert "[message from helper" in finished.output
    assert finished.output.index("[message from helper") < finished.output.index(
        "[background agent helper"
    )


async def test_get_messages_lists_what_the_task_received_and_the_fold_replays_it() -> None:
    def helper_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage) and last.name == "get_messages":
            return f"inbox: {last.content}"
        if isinstance(last, ToolResultMessage):
            return {"tool_calls": [call("get_messages")]}
        return {"tool_calls": [call("get_messages")]}

    def main_model(request: ModelRequest) -> object:
        last = request.messages[-1]
        if isinstance(last, ToolResultMessage) and last.name == "call_agent":
            return last.content
        return {
            "tool_calls": [
                call("send_message", task_id="helper", message="nobody runs yet"),
                call("call_agent", agent_name="helper", message="check"),
            ]
        }

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            Agent("helper", model=FunctionProvider(helper_model)),
        ],
        peer_messages=True,
        limits=Limits(max_repeated_tool_calls=None),
    )
    finished, events = await run_turn(runtime)
    refused = next(e for e in of(events, ev.ToolFinished) if e.tool == "send_message")
    assert refused.is_error and "No running agent" in refused.content
    assert finished.output == "[helper]inbox: No messages yet.[/helper]"

    # The log alone gives every call the same inbox and conversation (what a resume folds).
    fold = RunFold(Limits(), {})
    for event in runtime.store.events(runtime.session_id):
        fold.apply(event)
    assert fold.calls[finished.call_id].messages == runtime.conversation()


async def next_of(events: AsyncIterator[ev.Event], kind: type) -> ev.Event:
    """Read the subscription until an event of `kind` (the runtime records it, then waits)."""
    async for event in events:
        if isinstance(event, kind):
            return event
    raise AssertionError(f"the run ended without a {kind.__name__}")


async def test_get_messages_with_wait_seconds_waits_for_the_person_and_every_view_says_so(
    tmp_path: Path,
) -> None:
    runtime = Runtime(
        [agent("main", {"tool_calls": [call("get_messages", wait_seconds=30)]}, "got it")],
        store=SQLiteStore(tmp_path / "s.db"),
        options=RuntimeOptions(peer_messages=True),
    )
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="wait for my go"))
    waited = await next_of(events, ev.WaitingForMessage)
    assert isinstance(waited, ev.WaitingForMessage) and waited.timeout_s == 30
    stored = runtime.store.events(runtime.session_id)
    assert "Status: waiting for a message" in agent_status(stored, waited.run_id)
    assert (
        format_trace(stored)
        == f"user → main [{waited.run_id}]: wait for my go (waiting for a message)"
    )

    runtime.submit(ops.SendMessage(to="main", text="go ahead"))
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    stored = runtime.store.events(runtime.session_id)
    started = next(e for e in of(stored, ev.ToolStarted) if e.tool == "get_messages")
    (sent,) = of(stored, ev.MessageSent)
    (result,) = of(stored, ev.ToolFinished)
    assert started.arguments == {"wait_seconds": 30}
    assert started.seq < waited.seq < sent.seq < result.seq  # it waited until the message came
    assert result.content == "[message from user]\ngo ahead" and not result.is_error
    assert finished.output == "got it"
    assert "Status: completed" in agent_status(stored, waited.run_id)
    assert "(waiting for a message)" not in format_trace(stored)


async def test_a_message_read_with_get_messages_is_not_delivered_again(tmp_path: Path) -> None:
    requests: list[ModelRequest] = []

    def main_model(request: ModelRequest) -> object:
        requests.append(request)
        if len(requests) == 1:
            return {"tool_calls": [call("get_messages", wait_seconds=30)]}
        return "got it"

    store = SQLiteStore(tmp_path / "s.db")
    runtime = Runtime(
        [Agent("main", model=FunctionProvider(main_model))],
        store=store,
        options=RuntimeOptions(peer_messages=True),
    )
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="wait for my go"))
    await next_of(events, ev.WaitingForMessage)
    runtime.submit(ops.SendMessage(to="main", text="go ahead"))
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())

    assert finished.output == "got it"
    last = requests[-1].messages
    said = [m for m in last if "go ahead" in m.content]
    assert [type(m) for m in said] == [ToolResultMessage]  # in the tool's result, once
    assert not of(store.events(runtime.session_id), ev.MessagesDelivered)
    # The fold of the log agrees: a resumed session's context reads it once too.
    fold = RunFold(Limits(), {})
    for event in store.events(runtime.session_id):
        if event.run_id:
            fold.apply(event)
    conversation = fold.calls[finished.call_id].messages
    assert sum("go ahead" in m.content for m in conversation) == 1


async def test_get_messages_stops_waiting_at_its_timeout_and_refuses_a_bad_one() -> None:
    runtime = make_runtime(
        agent(
            "main",
            {"tool_calls": [call("get_messages", wait_seconds=0.05)]},
            {"tool_calls": [call("get_messages", wait_seconds="soon")]},
            "done",
        ),
        peer_messages=True,
    )
    finished, events = await run_turn(runtime)
    timed_out, refused = of(events, ev.ToolFinished)
    assert timed_out.content == "No new message arrived in 0.05 s." and not timed_out.is_error
    assert refused.is_error and "`wait_seconds` is a number of seconds" in refused.content
    assert len(of(events, ev.WaitingForMessage)) == 1  # a bad argument never waits
    assert finished.output == "done"


async def test_where_nobody_can_reply_a_lone_agent_does_not_wait_for_the_person() -> None:
    # `moot -p`: no front end sends messages, so a 300 s wait would only burn the run's time.
    runtime = make_runtime(
        agent("main", {"tool_calls": [call("get_messages", wait_seconds=300)]}, "went on"),
        peer_messages=True,
        person_replies=False,
    )
    finished, events = await asyncio.wait_for(run_turn(runtime), 10)
    (result,) = of(events, ev.ToolFinished)
    assert result.content.startswith("Nothing can message you here") and not result.is_error
    assert not of(events, ev.WaitingForMessage)
    assert finished.output == "went on"


async def test_where_nobody_can_reply_a_running_background_agent_is_still_waited_for() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    spawn = call("spawn_background_agent", agent_name="helper", message="think")
    script = ScriptedProvider(
        agents={
            "main": [
                {"tool_calls": [spawn]},
                {"tool_calls": [call("get_messages", wait_seconds=30)]},
                "main done",
            ],
            "helper": [{"tool_calls": [call("think")]}, "helper done"],
        }
    )
    runtime = make_runtime(
        [Agent("main", model=script), Agent("helper", model=script)],
        tools=[blocking_tool(started, release)],
        allow_background_agents=True,
        person_replies=False,
    )
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    waited = await next_of(events, ev.WaitingForMessage)
    assert waited.agent == "main"
    release.set()
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    stored = runtime.store.events(runtime.session_id)
    result = next(e for e in of(stored, ev.ToolFinished) if e.tool == "get_messages")
    assert "helper done" in result.content  # the wait ended with the background return
    assert finished.output == "main done"


async def test_an_answer_held_for_a_background_agent_is_waiting_for_a_message() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    spawn = call("spawn_background_agent", agent_name="helper", message="think")
    script = ScriptedProvider(
        agents={
            "main": [{"tool_calls": [spawn]}, "waiting for the helper", "main done"],
            "helper": [{"tool_calls": [call("think")]}, "helper done"],
        }
    )
    runtime = make_runtime(
        [Agent("main", model=script), Agent("helper", model=script)],
        tools=[blocking_tool(started, release)],
        allow_background_agents=True,
    )
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    waited = await next_of(events, ev.WaitingForMessage)
    await started.wait()
    assert waited.agent == "main" and waited.timeout_s is None and waited.tool_call_id is None
    stored = runtime.store.events(runtime.session_id)
    assert "Status: waiting for a message" in agent_status(stored, waited.call_id)
    helper = next(e for e in stored if isinstance(e, ev.AgentCalled))
    assert "Status: running" in agent_status(stored, helper.call_id)
    lines = format_trace(stored).splitlines()
    assert lines[0].endswith("(waiting for a message)") and lines[1].endswith("(running)")

    release.set()
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    stored = runtime.store.events(runtime.session_id)
    (delivered,) = of(stored, ev.MessagesDelivered)
    assert waited.seq < delivered.seq and finished.output == "main done"
    assert "Status: completed" in agent_status(stored, waited.call_id)
