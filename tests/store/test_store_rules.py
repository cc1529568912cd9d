"""Each rule of the log (moot.store.invariants a-e) broken on purpose, against both stores.

Every case appends a valid prefix, then one event that breaks the rule: the store must refuse
it with `EventInvariantError` naming the rule, and keep the log exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from msgspec.structs import replace

from moot.protocol.events import (
    AgentCalled,
    Event,
    ModeChanged,
    ModelResponded,
    SessionResumed,
    StateChanged,
)
from moot.protocol.messages import ToolCall
from moot.protocol.states import StopReason
from moot.store import EventInvariantError, MemoryStore, SQLiteStore, Store
from store_builders import RunScript, S, append_all, short_run

Case = tuple[list[Event], Event, str]
"""A valid prefix, the offending event, and a pattern its error message matches."""


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made: Store = (
        SQLiteStore(tmp_path / "sessions.db") if request.param == "sqlite" else MemoryStore()
    )
    yield made
    made.close()


def assert_refused(store: Store, rule: str, case: Callable[[str], Case]) -> None:
    sid = store.create_session().id
    prefix, bad, pattern = case(sid)
    append_all(store, prefix)
    before = store.events(sid)

    with pytest.raises(EventInvariantError, match=pattern) as caught:
        store.append(bad)

    assert caught.value.rule == rule
    assert str(caught.value).startswith(f"rule {rule} (")
    assert store.events(sid) == before
    info = store.session(sid)
    assert info is not None
    assert info.event_count == len(prefix)


# ---- a: calls exist before they are used --------------------------------------------------------


def run_without_turn_started(sid: str) -> Case:
    s = RunScript(sid)
    return [], s.text(), rf"text_delta for run {s.run_id}, which has not started"


def turn_started_with_another_call_id(sid: str) -> Case:
    bad = replace(RunScript(sid).start(), call_id="call_other")
    return [], bad, r"call_id == run_id .* got call_id call_other"


def turn_started_with_a_parent(sid: str) -> Case:
    bad = replace(RunScript(sid).start(), parent_call_id="call_x")
    return [], bad, r"no parent, .* parent call_x"


def event_for_a_call_never_created(sid: str) -> Case:
    s = RunScript(sid)
    return [s.start()], s.text(call_id="call_ghost"), r"call call_ghost, which was not created"


def agent_called_reusing_a_call_id(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    return [s.start(), child], child, rf"agent_called reuses call id {child.call_id}"


def agent_called_as_the_root_call(sid: str) -> Case:
    s = RunScript(sid)
    start = s.start()
    bad = replace(s.call(), call_id=s.run_id)
    return [start], bad, rf"reuses call id {s.run_id}"


def agent_called_by_an_ended_call(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    prefix = [s.start(), child, s.returned(child.call_id, S.CANCELLED, StopReason.USER_CANCELLED)]
    bad = s.call(parent=child.call_id)
    return prefix, bad, rf"parent {child.call_id} is not an open call"


def agent_called_by_an_unknown_call(sid: str) -> Case:
    s = RunScript(sid)
    start = s.start()
    bad = s.event(AgentCalled, "call_new", caller="x", message="m", depth=1)
    bad = replace(bad, parent_call_id="call_ghost")
    return [start], bad, r"parent call_ghost is not an open call"


def agent_called_at_the_wrong_depth(sid: str) -> Case:
    s = RunScript(sid)
    start = s.start()
    bad = replace(s.call(), depth=2)
    return [start], bad, r"has depth 2; its parent .* is at depth 0"


@pytest.mark.parametrize(
    "case",
    [
        run_without_turn_started,
        turn_started_with_another_call_id,
        turn_started_with_a_parent,
        event_for_a_call_never_created,
        agent_called_reusing_a_call_id,
        agent_called_as_the_root_call,
        agent_called_by_an_ended_call,
        agent_called_by_an_unknown_call,
        agent_called_at_the_wrong_depth,
    ],
)
def test_rule_a_calls_exist_before_they_are_used(store: Store, case: Callable[[str], Case]) -> None:
    assert_refused(store, "a", case)


# ---- b: nothing after the end -------------------------------------------------------------------


def second_open_run(sid: str) -> Case:
    first = RunScript(sid)
    return [first.start()], RunScript(sid).start(), rf"while run {first.run_id} is open"


def event_after_the_call_returned(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    prefix = [s.start(), child, s.returned(child.call_id, S.CANCELLED, StopReason.USER_CANCELLED)]
    return prefix, s.text(call_id=child.call_id), rf"call {child.call_id} .* after its terminal"


def event_after_turn_finished(sid: str) -> Case:
    run = short_run(sid)
    late = replace(run[2], text="too late")
    return run, late, rf"text_delta for run {run[0].run_id} after its turn_finished"


def run_id_reused_after_turn_finished(sid: str) -> Case:
    run = short_run(sid)
    return run, run[0], rf"turn_started for run {run[0].run_id} after its turn_finished"


def turn_finished_with_an_open_child_call(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    prefix = [s.start(), *s.model_turn(), child]
    return prefix, s.finish(), rf"while calls are open: {child.call_id}"


def turn_finished_for_a_child_call(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    prefix = [s.start(), child, *s.model_turn(child.call_id)]
    bad = replace(s.finish(), call_id=child.call_id, parent_call_id=child.parent_call_id)
    return prefix, bad, rf"turn_finished for call {child.call_id}, not the root call"


def agent_returned_for_the_root_call(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [s.start(), *s.model_turn()]
    return prefix, s.returned(s.run_id), r"agent_returned for the root call"


def agent_returned_while_a_call_it_made_is_open(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    grandchild = s.call(parent=child.call_id)
    prefix = [s.start(), child, grandchild]
    bad = s.returned(child.call_id, S.CANCELLED, StopReason.USER_CANCELLED)
    return (
        prefix,
        bad,
        rf"call {child.call_id} .* while calls it made are open: {grandchild.call_id}",
    )


@pytest.mark.parametrize(
    "case",
    [
        second_open_run,
        event_after_the_call_returned,
        agent_returned_while_a_call_it_made_is_open,
        event_after_turn_finished,
        run_id_reused_after_turn_finished,
        turn_finished_with_an_open_child_call,
        turn_finished_for_a_child_call,
        agent_returned_for_the_root_call,
    ],
)
def test_rule_b_nothing_after_the_end(store: Store, case: Callable[[str], Case]) -> None:
    assert_refused(store, "b", case)


# ---- c: legal state transitions only ------------------------------------------------------------


def illegal_transition(sid: str) -> Case:
    s = RunScript(sid)
    return (
        [s.start()],
        s.move(S.TOOL_RUNNING),
        r"illegal run state transition created -> tool_running",
    )


def wrong_from_state(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [s.start(), s.move(S.MODEL_PENDING)]
    bad = s.event(StateChanged, from_state=S.DECISION_RECEIVED, to_state=S.TOOL_PENDING)
    return prefix, bad, r"from decision_received, but call .* is in model_pending"


def state_changed_into_a_terminal_state(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [s.start(), *s.model_turn()]
    return prefix, s.move(S.COMPLETED), r"into terminal state completed"


def terminal_with_a_disagreeing_stop_reason(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [s.start(), *s.model_turn()]
    bad = s.finish(S.COMPLETED, StopReason.MAX_TURNS)
    return prefix, bad, r"stop reason max_turns does not agree with terminal state completed"


def agent_returned_with_a_disagreeing_stop_reason(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    prefix = [s.start(), child, s.move(S.MODEL_PENDING, child.call_id)]
    bad = s.returned(child.call_id, S.FAILED, StopReason.USER_CANCELLED)
    return prefix, bad, r"stop reason user_cancelled does not agree with terminal state failed"


def terminal_from_a_state_that_cannot_end_so(sid: str) -> Case:
    s = RunScript(sid)
    return [s.start()], s.finish(), r"illegal run state transition created -> completed"


def terminal_event_with_a_working_state(sid: str) -> Case:
    s = RunScript(sid)
    start = s.start()
    bad = replace(s.finish(), state=S.MODEL_PENDING)
    return [start], bad, r"model_pending is not a terminal state"


@pytest.mark.parametrize(
    "case",
    [
        illegal_transition,
        wrong_from_state,
        state_changed_into_a_terminal_state,
        terminal_with_a_disagreeing_stop_reason,
        agent_returned_with_a_disagreeing_stop_reason,
        terminal_from_a_state_that_cannot_end_so,
        terminal_event_with_a_working_state,
    ],
)
def test_rule_c_legal_state_transitions_only(store: Store, case: Callable[[str], Case]) -> None:
    assert_refused(store, "c", case)


# ---- d: one result per started tool -------------------------------------------------------------


def _tools_running(s: RunScript) -> list[Event]:
    return [s.start(), *s.model_turn(), *s.tools_to_running()]


def tool_result_without_start(sid: str) -> Case:
    s = RunScript(sid)
    return _tools_running(s), s.tool_finished("tc_9"), r"tool call tc_9, which never started"


def duplicate_tool_result(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [*_tools_running(s), s.tool_started("tc_1"), s.tool_finished("tc_1")]
    return prefix, s.tool_finished("tc_1"), r"second result for tool call tc_1"


def duplicate_tool_start(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [*_tools_running(s), s.tool_started("tc_1")]
    return prefix, s.tool_started("tc_1"), r"tool call tc_1 started twice"


def tool_restarted_after_its_result(sid: str) -> Case:
    s = RunScript(sid)
    prefix = [*_tools_running(s), s.tool_started("tc_1"), s.tool_finished("tc_1")]
    return prefix, s.tool_started("tc_1"), r"tool call tc_1 started twice"


def tool_result_in_another_call(sid: str) -> Case:
    s = RunScript(sid)
    child = s.call()
    prefix = [*_tools_running(s), s.tool_started("tc_1"), child]
    bad = s.tool_finished("tc_1", child.call_id)
    return prefix, bad, rf"tool call tc_1, which never started in call {child.call_id}"


@pytest.mark.parametrize(
    "case",
    [
        tool_result_without_start,
        duplicate_tool_result,
        duplicate_tool_start,
        tool_restarted_after_its_result,
        tool_result_in_another_call,
    ],
)
def test_rule_d_one_result_per_started_tool(store: Store, case: Callable[[str], Case]) -> None:
    assert_refused(store, "d", case)


# ---- e: session events stand outside runs -----------------------------------------------------


def session_event_naming_a_run(sid: str) -> Case:
    s = RunScript(sid)
    prefix: list[Event] = [s.start()]
    bad = ModeChanged(session_id=sid, run_id=s.run_id, call_id=s.run_id, mode="plan",
                      previous="default")  # fmt: skip
    return prefix, bad, r"mode_changed is a session event, yet names a run"


def resumed_sitting_naming_a_run(sid: str) -> Case:
    s = RunScript(sid)
    bad = SessionResumed(session_id=sid, run_id=s.run_id, call_id=s.run_id, model="m")
    return [s.start()], bad, r"session_resumed is a session event, yet names a run"


def run_event_without_a_run(sid: str) -> Case:
    bad = replace(RunScript(sid).text(), run_id="", call_id="")
    return [], bad, r"text_delta has no run_id or call_id"


@pytest.mark.parametrize(
    "case", [session_event_naming_a_run, resumed_sitting_naming_a_run, run_event_without_a_run]
)
def test_rule_e_session_events_stand_outside_runs(
    store: Store, case: Callable[[str], Case]
) -> None:
    assert_refused(store, "a" if case is run_event_without_a_run else "e", case)


# ---- f: events fit their schema ---------------------------------------------------------------


def text_that_is_a_number(sid: str) -> Case:
    s = RunScript(sid)
    return [s.start()], replace(s.text(), text=7), r"Expected `str`, got `int` - at `\$.text`"


def tool_call_without_a_name(sid: str) -> Case:
    s = RunScript(sid)
    call = ToolCall(id="t1", name=None)  # type: ignore[arg-type]
    bad = s.event(ModelResponded, model="m", tool_calls=(call,))
    return [s.start()], bad, r"Expected `str`, got `null` - at `\$.tool_calls\[0\].name`"


@pytest.mark.parametrize("case", [text_that_is_a_number, tool_call_without_a_name])
def test_rule_f_events_fit_their_schema(store: Store, case: Callable[[str], Case]) -> None:
    assert_refused(store, "f", case)


def test_session_events_may_come_between_runs_and_during_one(store: Store, tmp_path: Path) -> None:
    sid = store.create_session().id

    def mode(new: str, old: str) -> ModeChanged:
        return ModeChanged(session_id=sid, mode=new, previous=old)

    first, second = short_run(sid, run_id="run_1"), short_run(sid, run_id="run_2")
    events = [mode("plan", "default"), *first[:2], mode("default", "plan"), *first[2:]]
    sitting = SessionResumed(session_id=sid, model="m", mode="default", agents=("moot",))
    events += [mode("dontAsk", "default"), sitting, *second]
    append_all(store, events)
    stored = store.events(sid)
    assert [e.kind for e in stored] == [e.kind for e in events]
    assert [e.seq for e in stored] == list(range(1, len(events) + 1))
    if isinstance(store, SQLiteStore):  # a reopened store replays the log and goes on
        store.close()
        reopened = SQLiteStore(tmp_path / "sessions.db")
        reopened.append(mode("plan", "dontAsk"))
        assert reopened.events(sid)[-1].seq == len(events) + 1
        reopened.close()


def test_a_log_an_older_moot_wrote_with_a_call_ended_before_its_callee_still_loads() -> None:
    """The rule holds at append; a stored log that breaks it (an older moot could leave a
    callee open after its caller returned) is replayed all the same, for a resume to end it."""
    from moot.store.invariants import SessionLog

    s = RunScript("ses_old")
    child = s.call()
    grandchild = s.call(parent=child.call_id)
    events = [
        s.start(),
        child,
        grandchild,
        s.returned(child.call_id, S.CANCELLED, StopReason.USER_CANCELLED),
    ]
    stored = [replace(e, seq=n) for n, e in enumerate(events, 1)]

    log = SessionLog.replay("ses_old", stored)

    assert log.open_calls() == [s.run_id, grandchild.call_id]
    end = s.finish(S.CANCELLED, StopReason.USER_CANCELLED)
    with pytest.raises(EventInvariantError, match="while calls are open"):
        log.check(end)
    log.append(s.returned(grandchild.call_id, S.CANCELLED, StopReason.USER_CANCELLED))
    log.check(end)
