"""Run states, stop reasons and the legal transitions between them.

Every agent call (the person's turn to the first agent, or one peer calling another) is a run
with its own state machine. Illegal transitions are bugs: `check_transition` raises, and the
store refuses to append them.
"""

from __future__ import annotations

from enum import StrEnum


class TransitionError(ValueError):
    """A state change or terminal outcome that the state machine forbids."""


class RunState(StrEnum):
    CREATED = "created"
    MODEL_PENDING = "model_pending"
    DECISION_RECEIVED = "decision_received"
    TOOL_PENDING = "tool_pending"
    APPROVAL_PENDING = "approval_pending"
    TOOL_RUNNING = "tool_running"
    OBSERVATION_RECORDED = "observation_recorded"
    COMPLETED = "completed"
    STOPPED = "stopped"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATES


TERMINAL_STATES = frozenset(
    {RunState.COMPLETED, RunState.STOPPED, RunState.FAILED, RunState.CANCELLED}
)


class StopReason(StrEnum):
    COMPLETED = "completed"
    # limits: checked before the next model call or tool, never after the damage
    MAX_TURNS = "max_turns"
    MAX_WALL_TIME = "max_wall_time"
    MAX_INPUT_TOKENS = "max_input_tokens"
    MAX_OUTPUT_TOKENS = "max_output_tokens"
    MAX_TOTAL_TOKENS = "max_total_tokens"
    MAX_COST = "max_cost"
    REPEATED_TOOL_CALL = "repeated_tool_call"
    NO_PROGRESS = "no_progress"
    CONSECUTIVE_ERRORS = "consecutive_errors"
    MAX_CALL_DEPTH = "max_call_depth"
    CONTEXT_WINDOW = "context_window"
    """The conversation no longer fits the model's context window."""
    GATE_STOPPED = "gate_stopped"
    HOOK_BLOCKED = "hook_blocked"
    """A hook refused the person's prompt (exit 2) or said `continue: false`."""
    # failures
    PROVIDER_ERROR = "provider_error"
    INVALID_MODEL_RESPONSE = "invalid_model_response"
    INTERNAL_ERROR = "internal_error"
    # the person
    USER_CANCELLED = "user_cancelled"


_WORKING = (RunState.STOPPED, RunState.FAILED, RunState.CANCELLED)

# Each state's legal successors. A model turn goes MODEL_PENDING -> DECISION_RECEIVED, then
# either ends the run (COMPLETED), asks again (MODEL_PENDING: a turn gate's retry or an empty
# reply), or hands its tool calls through TOOL_PENDING -> APPROVAL_PENDING -> TOOL_RUNNING ->
# OBSERVATION_RECORDED. APPROVAL_PENDING may skip to OBSERVATION_RECORDED when every call was
# denied; OBSERVATION_RECORDED may complete when the model called finish().
TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    RunState.CREATED: frozenset({RunState.MODEL_PENDING, *_WORKING}),
    RunState.MODEL_PENDING: frozenset({RunState.DECISION_RECEIVED, *_WORKING}),
    RunState.DECISION_RECEIVED: frozenset(
        {RunState.TOOL_PENDING, RunState.MODEL_PENDING, RunState.COMPLETED, *_WORKING}
    ),
    RunState.TOOL_PENDING: frozenset({RunState.APPROVAL_PENDING, *_WORKING}),
    RunState.APPROVAL_PENDING: frozenset(
        {RunState.TOOL_RUNNING, RunState.OBSERVATION_RECORDED, *_WORKING}
    ),
    RunState.TOOL_RUNNING: frozenset({RunState.OBSERVATION_RECORDED, *_WORKING}),
    RunState.OBSERVATION_RECORDED: frozenset(
        {RunState.MODEL_PENDING, RunState.COMPLETED, *_WORKING}
    ),
    RunState.COMPLETED: frozenset(),
    RunState.STOPPED: frozenset(),
    RunState.FAILED: frozenset(),
    RunState.CANCELLED: frozenset(),
}

STOP_REASONS_BY_STATE: dict[RunState, frozenset[StopReason]] = {
    RunState.COMPLETED: frozenset({StopReason.COMPLETED}),
    RunState.STOPPED: frozenset(
        {
            StopReason.MAX_TURNS,
            StopReason.MAX_WALL_TIME,
            StopReason.MAX_INPUT_TOKENS,
            StopReason.MAX_OUTPUT_TOKENS,
            StopReason.MAX_TOTAL_TOKENS,
            StopReason.MAX_COST,
            StopReason.REPEATED_TOOL_CALL,
            StopReason.NO_PROGRESS,
            StopReason.CONSECUTIVE_ERRORS,
            StopReason.MAX_CALL_DEPTH,
            StopReason.CONTEXT_WINDOW,
            StopReason.GATE_STOPPED,
            StopReason.HOOK_BLOCKED,
        }
    ),
    RunState.FAILED: frozenset(
        {StopReason.PROVIDER_ERROR, StopReason.INVALID_MODEL_RESPONSE, StopReason.INTERNAL_ERROR}
    ),
    RunState.CANCELLED: frozenset({StopReason.USER_CANCELLED}),
}


def check_transition(current: RunState, target: RunState) -> None:
    """Raise `TransitionError` unless `current -> target` is legal."""
    if target not in TRANSITIONS[current]:
        raise TransitionError(f"illegal run state transition {current} -> {target}")


def check_terminal(state: RunState, reason: StopReason | None) -> None:
    """Raise `TransitionError` unless `state` is terminal and `reason` agrees with it."""
    allowed = STOP_REASONS_BY_STATE.get(state)
    if allowed is None or not allowed:
        raise TransitionError(f"{state} is not a terminal state")
    if reason not in allowed:
        raise TransitionError(f"stop reason {reason} does not agree with terminal state {state}")


def state_for(reason: StopReason) -> RunState:
    """The one terminal state a stop reason belongs to."""
    for state, reasons in STOP_REASONS_BY_STATE.items():
        if reason in reasons:
            return state
    raise TransitionError(f"stop reason {reason} has no terminal state")  # pragma: no cover
