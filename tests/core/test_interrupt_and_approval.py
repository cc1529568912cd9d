"""Interrupting a turn, and the approval seam (an event out, an op back)."""

from __future__ import annotations

import asyncio

from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalRequest, Verdict
from moot.protocol.messages import ToolResultMessage
from moot.protocol.states import RunState, StopReason
from moot.testing import drive_turn
from moot.tools.base import SideEffect, tool
from runtime_helpers import agent, call, make_runtime, of


@tool(side_effect=SideEffect.RUNS_COMMANDS)
async def hang() -> str:
    """Wait until cancelled."""
    await asyncio.Event().wait()  # never set
    return "never"


@tool(side_effect=SideEffect.WRITES_WORKSPACE)
def touch(path: str) -> str:
    """Pretend to create a file."""
    return f"created {path}"


async def drive_until(runtime: Runtime, kind: str, op: ops.Op) -> list[ev.Event]:
    """Run a turn; when an event of `kind` arrives, submit `op`; collect to turn_finished."""
    outcome = await drive_turn(runtime, react=lambda e: op if e.kind == kind else None)
    return outcome.events


async def test_interrupt_during_a_tool_records_it_as_interrupted() -> None:
    runtime = make_runtime(agent("main", {"tool_calls": [call("hang")]}), tools=[hang])
    events = await drive_until(runtime, "tool_started", ops.Interrupt())
    finished = events[-1]
    assert (finished.state, finished.stop_reason) == (
        RunState.CANCELLED,
        StopReason.USER_CANCELLED,
    )
    (result,) = of(events, ev.ToolFinished)
    assert result.interrupted and result.is_error
    # The log stays consistent: the next turn sees the interrupted result and runs normally.
    seen_messages = runtime.conversation()
    assert isinstance(seen_messages[-1], ToolResultMessage)
    assert seen_messages[-1].is_error


async def test_interrupt_while_the_model_streams() -> None:
    runtime = make_runtime(agent("main", {"text": "slow", "delay": 30}))
    events = await drive_until(runtime, "state_changed", ops.Interrupt())
    assert events[-1].stop_reason is StopReason.USER_CANCELLED
    assert not of(events, ev.ModelResponded)


async def test_a_session_goes_on_after_an_interrupt() -> None:
    main = agent("main", {"tool_calls": [call("hang")]}, "back again")
    runtime = make_runtime(main, tools=[hang])
    await drive_until(runtime, "tool_started", ops.Interrupt())
    stream = runtime.events()
    runtime.submit(ops.UserTurn(text="continue"))
    finished = await runtime.wait()
    assert finished is not None and finished.output == "back again"
    runtime.submit(ops.Shutdown())
    assert [e async for e in stream][-1].kind == "turn_finished"


class AskForWrites:
    def decide(self, request: ApprovalRequest) -> Verdict:
        if request.side_effect is SideEffect.READ_ONLY or request.tool == "finish":
            return Verdict("allow")
        return Verdict("ask", reason="writes a file", preview=f"create {request.arguments}")


async def test_an_approved_call_runs() -> None:
    main = agent("main", {"tool_calls": [call("touch", path="a.txt")]}, "done")
    runtime = make_runtime(main, tools=[touch], approval=AskForWrites())
    stream = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    async for event in stream:
        if isinstance(event, ev.ApprovalRequested):
            assert (event.tool, event.reason) == ("touch", "writes a file")
            assert "a.txt" in event.preview
            runtime.submit(ops.Approve(tool_call_id=event.tool_call_id))
        if isinstance(event, ev.TurnFinished):
            break
    events = runtime.store.events(runtime.session_id)
    assert of(events, ev.ApprovalDecided)[0].approved
    assert of(events, ev.ToolFinished)[0].content == "created a.txt"
    states = [e.to_state for e in of(events, ev.StateChanged)]
    assert RunState.APPROVAL_PENDING in states


async def test_deny_with_feedback_never_runs_the_call_and_the_model_hears_why() -> None:
    main = agent("main", {"tool_calls": [call("touch", path="a.txt")]}, "understood")
    runtime = make_runtime(main, tools=[touch], approval=AskForWrites())
    stream = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    async for event in stream:
        if isinstance(event, ev.ApprovalRequested):
            # An answer for an unknown call changes nothing; the real one settles it.
            runtime.submit(ops.Deny(tool_call_id="no-such-call"))
            runtime.submit(ops.Deny(tool_call_id=event.tool_call_id, feedback="use b.txt"))
        if isinstance(event, ev.TurnFinished):
            break
    events = runtime.store.events(runtime.session_id)
    assert not of(events, ev.ToolStarted)
    decided = of(events, ev.ApprovalDecided)[0]
    assert (decided.approved, decided.by, decided.feedback) == (False, "user", "use b.txt")
    result = runtime.conversation()[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert "refused" in result.content and "use b.txt" in result.content


async def test_a_policy_denial_needs_no_person() -> None:
    class DenyWrites:
        def decide(self, request: ApprovalRequest) -> Verdict:
            if request.side_effect is SideEffect.WRITES_WORKSPACE:
                return Verdict("deny", reason="read-only session")
            return Verdict("allow")

    main = agent("main", {"tool_calls": [call("touch", path="a.txt")]}, "ok")
    runtime = make_runtime(main, tools=[touch], approval=DenyWrites())
    stream = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    events = [e async for e in stream]
    assert finished is not None and finished.output == "ok"
    assert not of(events, ev.ApprovalRequested)
    assert of(events, ev.ApprovalDecided)[0].by == "policy"
    transitions = [(e.from_state, e.to_state) for e in of(events, ev.StateChanged)]
    assert (RunState.APPROVAL_PENDING, RunState.OBSERVATION_RECORDED) in transitions


async def test_an_approval_that_changes_the_input_runs_the_changed_call() -> None:
    main = agent("main", {"tool_calls": [call("touch", path="a.txt")]}, "done")
    runtime = make_runtime(main, tools=[touch], approval=AskForWrites())

    def approve(event: ev.Event) -> ops.Op | None:
        if isinstance(event, ev.ApprovalRequested):
            return ops.Approve(tool_call_id=event.tool_call_id, updated_input={"path": "b.txt"})
        return None

    await drive_turn(runtime, react=approve)
    events = runtime.store.events(runtime.session_id)
    decided = of(events, ev.ApprovalDecided)[0]
    assert (decided.approved, decided.updated_input) == (True, {"path": "b.txt"})
    assert of(events, ev.ToolStarted)[0].arguments == {"path": "b.txt"}
    assert of(events, ev.ToolFinished)[0].content == "created b.txt"


async def test_a_changed_input_the_policy_denies_stays_refused() -> None:
    class AskButNeverSecrets(AskForWrites):
        def decide(self, request: ApprovalRequest) -> Verdict:
            if request.arguments.get("path") == "secret.txt":
                return Verdict("deny", reason="secret.txt is denied")
            return super().decide(request)

    main = agent("main", {"tool_calls": [call("touch", path="a.txt")]}, "ok")
    runtime = make_runtime(main, tools=[touch], approval=AskButNeverSecrets())

    def approve(event: ev.Event) -> ops.Op | None:
        if isinstance(event, ev.ApprovalRequested):
            changed = {"path": "secret.txt"}
            return ops.Approve(tool_call_id=event.tool_call_id, updated_input=changed)
        return None

    await drive_turn(runtime, react=approve)
    events = runtime.store.events(runtime.session_id)
    assert not of(events, ev.ToolStarted)
    decided = of(events, ev.ApprovalDecided)[0]
    assert (decided.approved, decided.by) == (False, "policy")
    assert "changed input is refused: secret.txt is denied" in decided.feedback
