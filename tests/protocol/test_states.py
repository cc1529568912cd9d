"""The run state machine: every legal and illegal transition, and terminal agreement."""

from __future__ import annotations

import itertools

import pytest

from moot.protocol.states import (
    STOP_REASONS_BY_STATE,
    RunState,
    StopReason,
    TransitionError,
    check_terminal,
    check_transition,
    state_for,
)

S = RunState
END = {S.STOPPED, S.FAILED, S.CANCELLED}
LEGAL = {
    S.CREATED: {S.MODEL_PENDING} | END,
    S.MODEL_PENDING: {S.DECISION_RECEIVED} | END,
    S.DECISION_RECEIVED: {S.TOOL_PENDING, S.MODEL_PENDING, S.COMPLETED} | END,
    S.TOOL_PENDING: {S.APPROVAL_PENDING} | END,
    S.APPROVAL_PENDING: {S.TOOL_RUNNING, S.OBSERVATION_RECORDED} | END,
    S.TOOL_RUNNING: {S.OBSERVATION_RECORDED} | END,
    S.OBSERVATION_RECORDED: {S.MODEL_PENDING, S.COMPLETED} | END,
    S.COMPLETED: set(),
    S.STOPPED: set(),
    S.FAILED: set(),
    S.CANCELLED: set(),
}


@pytest.mark.parametrize(("current", "target"), list(itertools.product(RunState, RunState)))
def test_transition_table(current: RunState, target: RunState) -> None:
    if target in LEGAL[current]:
        check_transition(current, target)
    else:
        with pytest.raises(TransitionError, match="illegal"):
            check_transition(current, target)


def test_terminal_states_have_no_way_out() -> None:
    for state in RunState:
        assert state.terminal == (not LEGAL[state])


@pytest.mark.parametrize(("state", "reason"), list(itertools.product(RunState, StopReason)))
def test_terminal_outcome_agrees_with_its_stop_reason(state: RunState, reason: StopReason) -> None:
    if state.terminal and reason in STOP_REASONS_BY_STATE[state]:
        check_terminal(state, reason)
        assert state_for(reason) is state
    else:
        with pytest.raises(TransitionError):
            check_terminal(state, reason)


def test_every_stop_reason_belongs_to_exactly_one_terminal_state() -> None:
    for reason in StopReason:
        owners = [s for s, reasons in STOP_REASONS_BY_STATE.items() if reason in reasons]
        assert len(owners) == 1, reason
    assert STOP_REASONS_BY_STATE[S.CANCELLED] == {StopReason.USER_CANCELLED}
    assert STOP_REASONS_BY_STATE[S.COMPLETED] == {StopReason.COMPLETED}
