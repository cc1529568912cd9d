"""`SessionLog` on its own: the queries the runtime uses, and rebuilding it by replay."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from moot.protocol.events import Event
from moot.protocol.states import StopReason
from moot.store.invariants import EventInvariantError, SessionLog
from store_builders import RunScript, S, full_run, short_run

SID = "ses_log"


def numbered(events: list[Event], first: int = 1) -> list[Event]:
    return [replace(e, seq=first + i) for i, e in enumerate(events)]


def test_queries_follow_the_open_run() -> None:
    log = SessionLog(SID)
    s = RunScript(SID)
    assert (log.next_seq, log.open_run_id, log.open_calls()) == (1, None, [])

    child = s.call()
    for event in [s.start(), *s.model_turn(), *s.tools_to_running(), s.tool_started("tc_1")]:
        log.append(event)
    log.append(child)

    assert log.open_run_id == s.run_id
    assert log.next_seq == 10
    assert log.state_of(s.run_id) is S.TOOL_RUNNING
    assert log.state_of(child.call_id) is S.CREATED
    assert (log.depth_of(s.run_id), log.depth_of(child.call_id)) == (0, 1)
    assert log.running_tools(s.run_id) == {"tc_1"}
    assert log.open_calls() == [s.run_id, child.call_id]

    log.append(s.tool_finished("tc_1"))
    log.append(s.returned(child.call_id, S.CANCELLED, StopReason.USER_CANCELLED))
    assert log.running_tools(s.run_id) == frozenset()
    assert log.open_calls() == [s.run_id]

    log.append(s.move(S.OBSERVATION_RECORDED))
    log.append(s.finish())
    assert (log.open_run_id, log.is_finished(s.run_id), log.next_seq) == (None, True, 14)
    with pytest.raises(KeyError):
        log.state_of(s.run_id)


def test_check_changes_nothing() -> None:
    log = SessionLog(SID)
    start = RunScript(SID).start()
    log.check(start)
    log.check(start)
    assert (log.next_seq, log.open_run_id) == (1, None)


def test_an_event_of_another_session_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="checked against the log of session 'ses_log'"):
        SessionLog(SID).check(RunScript("ses_other").start())


def test_replay_of_every_event_matches_appending_them() -> None:
    s = RunScript(SID)
    open_run = [s.start(), *s.model_turn(), *s.tools_to_running(), s.tool_started("tc_7")]
    stored = numbered([*full_run(SID), *short_run(SID), *open_run])

    log = SessionLog.replay(SID, stored)

    assert log.next_seq == len(stored) + 1
    assert log.open_run_id == s.run_id
    assert log.state_of(s.run_id) is S.TOOL_RUNNING
    assert log.running_tools(s.run_id) == {"tc_7"}
    assert log.is_finished(stored[0].run_id)
    with pytest.raises(EventInvariantError, match="rule c"):
        log.check(s.move(S.MODEL_PENDING))
    log.append(s.tool_finished("tc_7"))


def test_replay_of_the_open_run_only() -> None:
    finished = numbered(short_run(SID, texts=5))
    s = RunScript(SID)
    open_run = numbered([s.start(), s.move(S.MODEL_PENDING)], first=len(finished) + 1)

    log = SessionLog.replay(SID, open_run, finished_runs=[finished[0].run_id], last_seq=11)

    assert (log.next_seq, log.open_run_id) == (12, s.run_id)
    assert log.state_of(s.run_id) is S.MODEL_PENDING
    with pytest.raises(EventInvariantError, match="after its turn_finished"):
        log.check(finished[2])

    idle = SessionLog.replay(SID, [], finished_runs=[finished[0].run_id], last_seq=9)
    assert (idle.next_seq, idle.open_run_id) == (10, None)


def test_replay_refuses_a_log_out_of_order_or_breaking_a_rule() -> None:
    events = numbered(short_run(SID))
    with pytest.raises(ValueError, match="seq 2 after 3"):
        SessionLog.replay(SID, [events[0], events[2], events[1]])
    with pytest.raises(EventInvariantError, match="rule a"):
        SessionLog.replay(SID, events[1:])
