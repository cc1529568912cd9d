"""However a run ends, the calls it made end first, innermost first, each with its own recorded
end: also at the moment a callee exists in the log but its task has not taken its first step
(a task cancelled then never runs its drive, which is what records a call's end)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from call_ends import ends_in_order
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.states import StopReason
from moot.testing import drive_turn
from runtime_helpers import agent, call, make_runtime, of

ASK_HELPER = {"tool_calls": [call("call_agent", agent_name="helper", message="dig")]}
SPAWN_HELPER = {
    "tool_calls": [call("call_agent", agent_name="helper", message="dig", background=True)]
}


def stop_at(kind: type[ev.Event], op: Callable[[ev.Event], ops.Op]) -> Callable[[Runtime], None]:
    """Submit `op` from inside the runtime's own step that publishes the first `kind`."""

    def arm(runtime: Runtime) -> None:
        def listen(event: ev.Event) -> None:
            if isinstance(event, kind) and listen in runtime.listeners:
                runtime.listeners.remove(listen)
                runtime.submit(op(event))

        runtime.listeners.append(listen)

    return arm


@pytest.mark.parametrize(
    "stop",
    [ops.Interrupt(), ops.Shutdown()],
    ids=["interrupt", "shutdown (a closed pipe, a front end that failed or quit)"],
)
async def test_a_run_stopped_as_its_callee_is_made_ends_the_callee_first(stop: ops.Op) -> None:
    """Fails on the old code: the callee, cancelled before its first step, never recorded its
    end; the run's `turn_finished` broke rule b, and the session stayed open for ever."""
    runtime = make_runtime([agent("main", ASK_HELPER, "done"), agent("helper", "found it")])
    stop_at(ev.AgentCalled, lambda e: stop)(runtime)
    runtime.submit(ops.UserTurn(text="go"))

    finished = await runtime.wait()

    events = runtime.store.events(runtime.session_id)
    assert finished is not None and finished.stop_reason is StopReason.USER_CANCELLED
    ends_in_order(events)
    (returned,) = of(events, ev.AgentReturned)
    assert returned.stop_reason is StopReason.USER_CANCELLED
    assert [e.kind for e in events[-3:]] == ["agent_returned", "tool_finished", "turn_finished"]
    assert runtime.unfinished_run is None


async def test_a_background_agent_its_caller_stops_before_it_began_ends_first() -> None:
    """The caller spawns a background agent and at once hits a limit: the agent, cancelled
    before its first step, still records its end before the run's. Fails on the old code
    (rule b: `turn_finished` while a call is open)."""
    runtime = make_runtime(
        [agent("main", SPAWN_HELPER, "never asked"), agent("helper", "never asked either")],
        limits=Limits(max_turns=1),
        allow_background_agents=True,
    )

    outcome = await drive_turn(runtime, "go")

    assert outcome.finished.stop_reason is StopReason.MAX_TURNS
    ends_in_order(runtime.store.events(runtime.session_id))
    (returned,) = outcome.of(ev.AgentReturned)
    assert returned.agent == "helper" and returned.stop_reason is StopReason.USER_CANCELLED


async def test_cancel_agent_right_after_a_spawn_cancels_it() -> None:
    """`CancelAgent` of a background agent that has not taken its first step yet. Fails on the
    old code: the task was cancelled before its drive ran, so the call stayed open, and its
    caller started it again, as if nobody had cancelled it."""
    slow = {"text": "found it", "delay": 10}  # cancelled while it waits (or, before: answered)
    runtime = make_runtime(
        [agent("main", SPAWN_HELPER, "my part is done", "all done"), agent("helper", slow)],
        allow_background_agents=True,
    )
    stop_at(ev.ToolFinished, lambda e: ops.CancelAgent(task_id=helper_call(runtime)))(runtime)

    outcome = await drive_turn(runtime, "go")

    (returned,) = outcome.of(ev.AgentReturned)
    assert returned.stop_reason is StopReason.USER_CANCELLED
    assert not [e for e in outcome.of(ev.ModelResponded) if e.agent == "helper"]
    assert outcome.of(ev.OpRefused) == []
    ends_in_order(runtime.store.events(runtime.session_id))


def helper_call(runtime: Runtime) -> str:
    (called,) = runtime.store.events(runtime.session_id, kinds=("agent_called",))
    return called.call_id
