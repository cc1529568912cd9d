"""Logs as an older moot left them (calls left open), written with the store directly."""

from __future__ import annotations

from msgspec.structs import replace

from moot.core.fold import INTERRUPTED
from moot.protocol import events as ev
from moot.protocol.messages import ToolCall
from moot.protocol.states import RunState
from moot.store.sqlite import SQLiteStore

S = RunState


def ask(tool_call_id: str, message: str, **more: object) -> ToolCall:
    arguments = {"agent_name": "moot", "message": message, **more}
    return ToolCall(id=tool_call_id, name="call_agent", arguments=arguments)


class OldLog:
    """Writes a session's events straight into the store, as an older moot left them."""

    def __init__(self, store: SQLiteStore, session_id: str, model: str) -> None:
        self.store, self.session_id, self.model = store, session_id, model
        self.run_id = "run_old"
        self.states: dict[str, RunState] = {}
        self.parents: dict[str, str | None] = {self.run_id: None}

    def add(self, call_id: str, event: ev.Event) -> None:
        self.store.append(
            replace(
                event,
                session_id=self.session_id,
                run_id=self.run_id,
                agent="moot",
                call_id=call_id,
                parent_call_id=self.parents.get(call_id),
                submission_id="sub_1",
            )
        )

    def start(self) -> None:
        self.states[self.run_id] = S.CREATED
        self.add(self.run_id, ev.TurnStarted(prompt="hi", pool=("moot",)))

    def move(self, call_id: str, *targets: RunState) -> None:
        for target in targets:
            self.add(call_id, ev.StateChanged(from_state=self.states[call_id], to_state=target))
            self.states[call_id] = target

    def answer(self, call_id: str, text: str = "", tool: ToolCall | None = None) -> None:
        self.move(call_id, S.MODEL_PENDING)
        responded = ev.ModelResponded(
            model=self.model,
            text=text,
            tool_calls=(tool,) if tool else (),
            finish_reason="tool_use" if tool else "end_turn",
        )
        self.add(call_id, responded)
        self.move(call_id, S.DECISION_RECEIVED)
        if tool is not None:
            self.move(call_id, S.TOOL_PENDING, S.APPROVAL_PENDING, S.TOOL_RUNNING)
            self.add(
                call_id,
                ev.ToolStarted(tool_call_id=tool.id, tool=tool.name, arguments=tool.arguments),
            )

    def call(
        self, parent: str, child: str, tool: ToolCall, depth: int, background: bool = False
    ) -> None:
        self.parents[child] = parent
        self.states[child] = S.CREATED
        called = ev.AgentCalled(
            caller="moot",
            message=str(tool.arguments["message"]),
            depth=depth,
            tool_call_id=tool.id,
            background=background,
        )
        self.add(child, called)

    def result(self, call_id: str, tool: ToolCall, content: str, interrupted: bool = False) -> None:
        finished = ev.ToolFinished(
            tool_call_id=tool.id,
            tool=tool.name,
            content=content,
            is_error=interrupted,
            interrupted=interrupted,
        )
        self.add(call_id, finished)


def callee_left_open_after_its_caller_went_on(log: OldLog) -> None:
    """What the old code left when a closed pipe stopped the run as its callee was made: the
    callee open, the caller's `call_agent` recorded as interrupted, no `turn_finished`."""
    log.start()
    tool = ask("tc_1", "help")
    log.answer(log.run_id, tool=tool)
    log.call(log.run_id, "call_a", tool, depth=1)
    log.result(log.run_id, tool, INTERRUPTED, interrupted=True)
