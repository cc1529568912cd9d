"""Builders of valid event sequences, shared by the store tests (this module holds no tests).

Imported by name (`from store_builders import ...`): pytest puts `tests/` on `sys.path`,
and the SQLite concurrency test's child processes add it themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from moot.protocol.events import (
    AgentCalled,
    AgentReturned,
    Event,
    StateChanged,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)
from moot.protocol.ids import new_id
from moot.protocol.messages import Usage
from moot.protocol.states import RunState, StopReason
from moot.store.base import Store

S = RunState


class RunScript:
    """Builds the events of one run, tracking each call's state so every move is legal.

    Each method returns an event as if it were appended, and advances the tracked state.
    """

    def __init__(self, session_id: str, run_id: str | None = None, agent: str = "main") -> None:
        self.session_id = session_id
        self.run_id = run_id or new_id("run")
        self.states: dict[str, RunState] = {}
        self.parents: dict[str, str | None] = {self.run_id: None}
        self.agents: dict[str, str] = {self.run_id: agent}
        self.depths: dict[str, int] = {self.run_id: 0}

    def event(self, cls: type[Any], call_id: str | None = None, **fields: Any) -> Any:
        call_id = call_id or self.run_id
        return cls(
            session_id=self.session_id,
            run_id=self.run_id,
            agent=self.agents.get(call_id, "someone"),
            call_id=call_id,
            parent_call_id=self.parents.get(call_id),
            **fields,
        )

    def start(self, prompt: str = "fix the bug") -> TurnStarted:
        self.states[self.run_id] = S.CREATED
        return self.event(TurnStarted, prompt=prompt)

    def move(self, to: RunState, call_id: str | None = None) -> StateChanged:
        call_id = call_id or self.run_id
        event = self.event(StateChanged, call_id, from_state=self.states[call_id], to_state=to)
        self.states[call_id] = to
        return event

    def call(self, parent: str | None = None, agent: str = "helper") -> AgentCalled:
        parent = parent or self.run_id
        call_id = new_id("call")
        self.parents[call_id] = parent
        self.agents[call_id] = agent
        self.depths[call_id] = self.depths[parent] + 1
        self.states[call_id] = S.CREATED
        return self.event(
            AgentCalled,
            call_id,
            caller=self.agents[parent],
            message="look into it",
            depth=self.depths[call_id],
        )

    def text(self, text: str = "thinking aloud", call_id: str | None = None) -> TextDelta:
        return self.event(TextDelta, call_id, text=text)

    def tool_started(self, tool_call_id: str, call_id: str | None = None) -> ToolStarted:
        return self.event(
            ToolStarted, call_id, tool_call_id=tool_call_id, tool="read", arguments={"path": "a"}
        )

    def tool_finished(self, tool_call_id: str, call_id: str | None = None) -> ToolFinished:
        return self.event(
            ToolFinished, call_id, tool_call_id=tool_call_id, tool="read", content="x"
        )

    def returned(
        self,
        call_id: str,
        state: RunState = S.COMPLETED,
        reason: StopReason = StopReason.COMPLETED,
    ) -> AgentReturned:
        self.states[call_id] = state
        return self.event(AgentReturned, call_id, state=state, stop_reason=reason, output="done")

    def finish(
        self, state: RunState = S.COMPLETED, reason: StopReason = StopReason.COMPLETED
    ) -> TurnFinished:
        self.states[self.run_id] = state
        return self.event(
            TurnFinished,
            state=state,
            stop_reason=reason,
            output="all done",
            turns=2,
            usage=Usage(input_tokens=10, output_tokens=5),
            cost_usd=0.01,
            duration_ms=12.5,
        )

    def model_turn(self, call_id: str | None = None) -> list[Event]:
        """created or observation_recorded -> model_pending -> (a delta) -> decision_received."""
        return [
            self.move(S.MODEL_PENDING, call_id),
            self.text(call_id=call_id),
            self.move(S.DECISION_RECEIVED, call_id),
        ]

    def tools_to_running(self, call_id: str | None = None) -> list[Event]:
        """decision_received -> tool_pending -> approval_pending -> tool_running."""
        return [
            self.move(S.TOOL_PENDING, call_id),
            self.move(S.APPROVAL_PENDING, call_id),
            self.move(S.TOOL_RUNNING, call_id),
        ]


def short_run(session_id: str, texts: int = 1, run_id: str | None = None) -> list[Event]:
    """A run of `4 + texts` events: start, model_pending, deltas, decision_received, finish."""
    script = RunScript(session_id, run_id)
    events: list[Event] = [script.start(), script.move(S.MODEL_PENDING)]
    events += [script.text(f"delta {i}") for i in range(texts)]
    events += [script.move(S.DECISION_RECEIVED), script.finish()]
    return events


def full_run(session_id: str) -> list[Event]:
    """A run with a tool call and a peer call that itself runs a tool."""
    s = RunScript(session_id)
    events: list[Event] = [s.start(), *s.model_turn(), *s.tools_to_running()]
    events += [s.tool_started("tc_1"), s.tool_finished("tc_1")]
    child = s.call()
    events += [child, *s.model_turn(child.call_id), *s.tools_to_running(child.call_id)]
    events += [s.tool_started("tc_1", child.call_id), s.tool_finished("tc_1", child.call_id)]
    events += [s.move(S.OBSERVATION_RECORDED, child.call_id), s.returned(child.call_id)]
    events += [s.move(S.OBSERVATION_RECORDED), *s.model_turn(), s.finish()]
    return events


def append_all(store: Store, events: Iterable[Event]) -> list[Event]:
    return [store.append(event) for event in events]
