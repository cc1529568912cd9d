"""The agent loop, asserted through the events it records (scripted models, real tools)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from moot.core.agent import Agent
from moot.core.gate import GateDecision
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol.messages import Attachment, ToolResultMessage, UserMessage
from moot.protocol.states import RunState, StopReason
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.store.sqlite import SQLiteStore
from moot.tools.base import SideEffect, ToolResult, tool
from runtime_helpers import agent, call, kinds, make_runtime, of, run_turn


@tool(side_effect=SideEffect.READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(side_effect=SideEffect.READ_ONLY)
def explode() -> str:
    """Always fails."""
    raise ValueError("kaboom")


async def test_a_plain_answer_completes_the_turn() -> None:
    finished, events = await run_turn(make_runtime(agent("main", "hello there")))
    assert kinds(events) == [
        "turn_started",
        "->model_pending",
        "text_delta",
        "model_responded",
        "usage",
        "->decision_received",
        "turn_finished",
    ]
    assert (finished.state, finished.stop_reason, finished.output) == (
        RunState.COMPLETED,
        StopReason.COMPLETED,
        "hello there",
    )
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_a_tool_turn_then_an_answer() -> None:
    main = agent("main", {"tool_calls": [call("add", a=2, b=3)]}, "five")
    finished, events = await run_turn(make_runtime(main, tools=[add]))
    assert kinds(events, skip_states=True) == [
        "turn_started",
        "model_responded",
        "usage",
        "tool_started",
        "tool_finished",
        "text_delta",
        "model_responded",
        "usage",
        "turn_finished",
    ]
    states = [e.to_state for e in of(events, ev.StateChanged)]
    assert states == [
        RunState.MODEL_PENDING,
        RunState.DECISION_RECEIVED,
        RunState.TOOL_PENDING,
        RunState.APPROVAL_PENDING,
        RunState.TOOL_RUNNING,
        RunState.OBSERVATION_RECORDED,
        RunState.MODEL_PENDING,
        RunState.DECISION_RECEIVED,
    ]
    (result,) = of(events, ev.ToolFinished)
    assert (result.content, result.is_error) == ("5", False)
    assert finished.output == "five"
    assert finished.turns == 2


async def test_finish_and_a_plain_answer_give_the_same_result() -> None:
    plain, _ = await run_turn(make_runtime(agent("main", "done: 42")))
    via_finish, _ = await run_turn(
        make_runtime(agent("main", {"tool_calls": [call("finish", message="done: 42")]}))
    )
    assert (plain.output, plain.state, plain.stop_reason) == (
        via_finish.output,
        via_finish.state,
        via_finish.stop_reason,
    )


@pytest.mark.parametrize(
    ("tool_call", "expected"),
    [
        (call("add", a="two", b=3), "'a'"),
        (call("add", a=1), "'b'"),
        ({"name": "add", "arguments": '{"a": 1, "b": '}, "not valid JSON"),
        ({"name": "add", "arguments": "[1, 2]"}, "must be a JSON object"),
        (call("nope"), "Unknown tool 'nope'"),
        (call("explode"), "kaboom"),
    ],
)
async def test_bad_tool_calls_become_errors_the_model_sees(tool_call: dict, expected: str) -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> object:
        seen.append(request)
        return {"tool_calls": [tool_call]} if len(seen) == 1 else "recovered"

    main = Agent("main", model=FunctionProvider(model))
    finished, events = await run_turn(make_runtime(main, tools=[add, explode]))
    (result,) = of(events, ev.ToolFinished)
    assert result.is_error
    assert expected in result.content
    assert finished.state is RunState.COMPLETED
    last = seen[-1].messages[-1]
    assert isinstance(last, ToolResultMessage)
    assert last.is_error and expected in last.content


async def test_tool_results_carry_attachments_to_the_model() -> None:
    image = Attachment(mime_type="image/png", data="iVBORw0KGgo=")

    @tool(side_effect=SideEffect.READ_ONLY)
    def screenshot() -> ToolResult:
        """Take a screenshot."""
        return ToolResult("an image", attachments=(image,), display={"kind": "picture"})

    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> object:
        seen.append(request)
        return {"tool_calls": [call("screenshot")]} if len(seen) == 1 else "nice"

    runtime = make_runtime(Agent("main", model=FunctionProvider(model)), tools=[screenshot])
    _, events = await run_turn(runtime)
    result = seen[-1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.attachments == (image,)
    # Display data reaches front ends through the event, never the model.
    assert of(events, ev.ToolFinished)[0].display == {"kind": "picture"}
    assert "picture" not in msgspec.json.encode(result).decode()


async def test_read_only_calls_of_one_turn_run_concurrently() -> None:
    barrier = asyncio.Barrier(2)

    @tool(side_effect=SideEffect.READ_ONLY)
    async def meet(who: str) -> str:
        """Wait until the other caller arrives."""
        # Sequential execution would never get both parties here: the wait times out.
        await asyncio.wait_for(barrier.wait(), timeout=5)
        return f"{who} met"

    main = agent("main", {"tool_calls": [call("meet", who="a"), call("meet", who="b")]}, "ok")
    _, events = await run_turn(make_runtime(main, tools=[meet]))
    assert sorted(r.content for r in of(events, ev.ToolFinished)) == ["a met", "b met"]
    assert kinds(events, skip_states=True)[3:7] == [
        "tool_started",
        "tool_started",
        "tool_finished",
        "tool_finished",
    ]


async def test_mutating_calls_run_one_after_another_in_order() -> None:
    @tool(side_effect=SideEffect.WRITES_WORKSPACE)
    async def write(name: str) -> str:
        """Pretend to write."""
        await asyncio.sleep(0)
        return name

    calls = [call("write", name=n) for n in "abc"]
    main = agent("main", {"tool_calls": calls}, "ok")
    _, events = await run_turn(make_runtime(main, tools=[write]))
    tool_events = [
        (e.kind, e.arguments["name"] if e.kind == "tool_started" else e.content)
        for e in events
        if e.kind in ("tool_started", "tool_finished")
    ]
    assert tool_events == [
        ("tool_started", "a"), ("tool_finished", "a"),
        ("tool_started", "b"), ("tool_finished", "b"),
        ("tool_started", "c"), ("tool_finished", "c"),
    ]  # fmt: skip


async def test_a_stream_that_breaks_after_output_keeps_what_arrived() -> None:
    main = agent("main", {"text": "half an answ", "error": "connection reset"})
    finished, events = await run_turn(make_runtime(main))
    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.PROVIDER_ERROR)
    assert finished.output == "half an answ"
    (response,) = of(events, ev.ModelResponded)
    assert response.partial and response.text == "half an answ"
    assert "connection reset" in of(events, ev.Error)[0].message


async def test_a_non_retryable_provider_error_fails_the_run() -> None:
    finished, events = await run_turn(make_runtime(agent("main", {"error": "401 bad key"})))
    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.PROVIDER_ERROR)
    assert not of(events, ev.ModelResponded)


async def test_a_retryable_provider_error_ends_the_turn_without_asking_again() -> None:
    # A provider retries transient faults itself (providers/retry.py); an error that reaches
    # the loop means it gave up, so asking again would only multiply its tries.
    asked = []

    def model(request: ModelRequest) -> object:
        asked.append(request)
        return {"error": "overloaded", "retryable": True} if len(asked) == 1 else "fine now"

    runtime = make_runtime(Agent("main", model=FunctionProvider(model)))
    finished, events = await run_turn(runtime)
    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.PROVIDER_ERROR)
    assert len(asked) == 1
    (error,) = of(events, ev.Error)
    assert (error.message, error.retryable) == ("scripted: overloaded", True)
    assert kinds(events, skip_states=True)[-2:] == ["error", "turn_finished"]


async def test_an_empty_reply_means_the_agent_is_still_working() -> None:
    finished, events = await run_turn(make_runtime(agent("main", "", "there")))
    assert finished.output == "there"
    assert len(of(events, ev.ModelResponded)) == 2


async def test_the_agent_remembers_earlier_turns_of_the_session() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> object:
        seen.append(request)
        return f"answer {len(seen)}"

    runtime = make_runtime(Agent("main", model=FunctionProvider(model)))
    await run_turn(runtime, "first question")
    await run_turn(runtime, "second question")
    contents = [getattr(m, "content", None) for m in seen[-1].messages]
    assert contents == ["first question", "answer 1", "second question"]


async def test_a_failing_internal_bug_fails_the_run_cleanly() -> None:
    def model(request: ModelRequest) -> object:
        raise RuntimeError("bug in a provider")

    finished, events = await run_turn(make_runtime(Agent("main", model=FunctionProvider(model))))
    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.INTERNAL_ERROR)
    assert "bug in a provider" in of(events, ev.Error)[0].message


async def test_a_value_of_the_wrong_type_fails_the_run_and_the_log_still_reads_back(
    tmp_path: Path,
) -> None:
    """Events are not type-checked when built; the store refuses one that would not read back
    (rule f), so a tool whose result holds a value of the wrong type fails the run cleanly.
    (Its text is made text first: see `test_event_values.py`.)"""

    @tool(side_effect=SideEffect.READ_ONLY)
    def count() -> ToolResult:
        """Count."""
        return ToolResult("42", is_error="no")  # type: ignore[arg-type]

    store = SQLiteStore(tmp_path / "s.db")
    options = RuntimeOptions(tools=[count])
    runtime = Runtime(
        [agent("main", {"tool_calls": [call("count")]})], store=store, options=options
    )
    finished, events = await run_turn(runtime)

    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.INTERNAL_ERROR)
    assert "rule f" in of(events, ev.Error)[0].message
    assert "Expected `bool`, got `str` - at `$.is_error`" in of(events, ev.Error)[0].message
    reread = SQLiteStore(tmp_path / "s.db").events(runtime.session_id)
    assert [e.kind for e in reread] == [e.kind for e in events]


# ---- turn gates ---------------------------------------------------------------------------------


async def test_gate_replace_changes_what_the_loop_acts_on() -> None:
    def gate(turn):
        return GateDecision.replace("replaced answer") if turn.tool_calls else None

    main = agent("main", {"tool_calls": [call("add", a=1, b=1)]})
    finished, events = await run_turn(make_runtime(main, tools=[add], gate=gate))
    assert finished.output == "replaced answer"
    assert not of(events, ev.ToolStarted)
    assert of(events, ev.GateDecided)[0].action == "replace"


async def test_gate_retry_sends_feedback_and_asks_again() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> object:
        seen.append(request)
        return "draft" if len(seen) == 1 else "final"

    async def gate(turn):
        return GateDecision.retry("too short") if turn.text == "draft" else GateDecision.proceed()

    runtime = make_runtime(Agent("main", model=FunctionProvider(model)), gate=gate)
    finished, _ = await run_turn(runtime, "write")
    assert finished.output == "final"
    assert seen[1].messages == (UserMessage(content="write"), UserMessage(content="too short"))


async def test_gate_retries_are_capped() -> None:
    runtime = make_runtime(
        agent("main", "a", "b", "c", "d", "e"), gate=lambda turn: GateDecision.retry("again")
    )
    finished, events = await run_turn(runtime)
    assert len(of(events, ev.GateDecided)) == 3
    assert finished.output == "d"


async def test_gate_stop_ends_the_run_with_its_result() -> None:
    main = agent("main", {"tool_calls": [call("add", a=1, b=1)]})
    runtime = make_runtime(main, tools=[add], gate=lambda turn: GateDecision.stop("enough"))
    finished, events = await run_turn(runtime)
    assert (finished.state, finished.stop_reason, finished.output) == (
        RunState.STOPPED,
        StopReason.GATE_STOPPED,
        "enough",
    )
    assert not of(events, ev.ToolStarted)


async def test_repeated_tool_call_ids_are_made_unique_across_the_conversation() -> None:
    seen: list[ModelRequest] = []

    def model(request: ModelRequest) -> object:
        seen.append(request)
        if isinstance(request.messages[-1], ToolResultMessage):
            return "ok"
        return {"tool_calls": [{"id": "t1", "name": "add", "arguments": {"a": 1, "b": 1}}]}

    runtime = make_runtime(Agent("main", model=FunctionProvider(model)), tools=[add])
    await run_turn(runtime, "first")
    _, events = await run_turn(runtime, "second")
    (started,) = of(events, ev.ToolStarted)
    assert started.tool_call_id == "t1_"
    ids = [m.tool_call_id for m in seen[-1].messages if isinstance(m, ToolResultMessage)]
    assert ids == ["t1", "t1_"]


async def test_a_sandbox_violation_is_also_an_error_event() -> None:
    @tool(side_effect=SideEffect.RUNS_COMMANDS)
    def bash(command: str) -> ToolResult:
        """Pretend to hit the sandbox."""
        return ToolResult(
            "touch: Read-only file system",
            is_error=True,
            display={"sandbox_violation": "a write outside the workspace (bubblewrap)"},
        )

    main = agent("main", {"tool_calls": [call("bash", command="touch /etc/x")]}, "ok")
    _, events = await run_turn(make_runtime(main, tools=[bash]))
    (error,) = of(events, ev.Error)
    assert (error.source, error.message) == (
        "sandbox",
        "a write outside the workspace (bubblewrap)",
    )
    kinds_seen = kinds(events, skip_states=True)
    assert kinds_seen.index("error") == kinds_seen.index("tool_finished") + 1
