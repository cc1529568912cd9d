"""The `Store` contract, held by both the SQLite and the in-memory store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from msgspec.structs import replace

from moot.protocol.events import TextDelta, event_from_json, event_to_json
from moot.protocol.messages import Attachment
from moot.protocol.states import RunState
from moot.store import (
    EventInvariantError,
    MemoryStore,
    SQLiteStore,
    Store,
    UnknownSessionError,
)
from moot.store.base import ListTail
from store_builders import RunScript, append_all, full_run, short_run


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    made: Store = (
        SQLiteStore(tmp_path / "db" / "sessions.db") if request.param == "sqlite" else MemoryStore()
    )
    yield made
    made.close()


def test_append_assigns_seq_from_one_per_session(store: Store) -> None:
    a = store.create_session(title="a").id
    b = store.create_session(title="b").id
    run_a, run_b = short_run(a, texts=3), short_run(b, texts=1)

    stored_b = [store.append(e) for e in run_b[:2]]
    stored_a = append_all(store, run_a)
    stored_b += append_all(store, run_b[2:])

    assert [e.seq for e in stored_a] == list(range(1, len(run_a) + 1))
    assert [e.seq for e in stored_b] == list(range(1, len(run_b) + 1))
    assert all(e.seq == 0 for e in run_a), "the caller's events are left as they were"
    assert [e.seq for e in store.events(a)] == list(range(1, len(run_a) + 1))


def test_stored_events_round_trip_through_json(store: Store) -> None:
    sid = store.create_session().id
    events = full_run(sid)
    # A time stamp in another zone is the same instant after the round trip.
    events[2] = replace(
        events[2], ts=datetime(2025, 3, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    )
    stored = append_all(store, events)

    read = store.events(sid)

    assert read == stored
    assert [replace(e, seq=0) for e in read] == events
    assert read[2].ts == datetime(2025, 3, 1, 10, 30, 15, 123456, tzinfo=UTC)
    assert all(event_from_json(event_to_json(e)) == e for e in read)
    assert {type(e).__name__ for e in read} >= {"AgentCalled", "AgentReturned", "ToolFinished"}


def test_events_filter_by_run_seq_and_kind(store: Store) -> None:
    sid = store.create_session().id
    first = append_all(store, short_run(sid, texts=2))
    second = append_all(store, short_run(sid, texts=1))

    assert store.events(sid, run_id=second[0].run_id) == second
    assert store.events(sid, after_seq=4) == (first + second)[4:]
    assert [e.seq for e in store.events(sid, kinds={"text_delta"})] == [3, 4, 9]
    assert store.events(sid, run_id=first[0].run_id, kinds=["turn_finished"]) == [first[-1]]
    assert store.events(sid, kinds=()) == []


def test_open_run_is_the_run_without_turn_finished(store: Store) -> None:
    sid = store.create_session().id
    events = short_run(sid)
    assert store.open_run(sid) is None

    append_all(store, events[:-1])
    assert store.open_run(sid) == events[0].run_id

    store.append(events[-1])
    assert store.open_run(sid) is None


def test_unknown_session_is_a_clear_key_error(store: Store) -> None:
    event = short_run("ses_missing")[0]

    with pytest.raises(UnknownSessionError, match="no session 'ses_missing'"):
        store.append(event)
    with pytest.raises(KeyError):
        store.events("ses_missing")
    with pytest.raises(KeyError):
        store.open_run("ses_missing")
    with pytest.raises(KeyError):
        store.latest_checkpoint("ses_missing", "run_x")
    assert store.session("ses_missing") is None


def test_create_session_with_a_taken_id_is_refused(store: Store) -> None:
    info = store.create_session(session_id="ses_fixed", title="t", workspace="/w")
    assert (info.id, info.title, info.workspace, info.event_count) == ("ses_fixed", "t", "/w", 0)
    assert info.created_at.tzinfo is not None
    assert info.updated_at == info.created_at

    with pytest.raises(ValueError, match="exists"):
        store.create_session(session_id="ses_fixed")
    assert store.create_session().id.startswith("ses_")


def test_refused_append_persists_nothing(store: Store) -> None:
    sid = store.create_session().id
    script = RunScript(sid)
    append_all(store, [script.start(), script.move(RunState.MODEL_PENDING)])
    bad = script.event(TextDelta, "call_nobody", text="from nowhere")

    with pytest.raises(EventInvariantError):
        store.append(bad)

    assert [e.seq for e in store.events(sid)] == [1, 2]
    info = store.session(sid)
    assert info is not None
    assert info.event_count == 2
    assert store.append(script.text()).seq == 3


def test_sessions_list_newest_updated_first(store: Store) -> None:
    # Ids in creation order, so that equal creation times still list in a known order.
    old = store.create_session(title="old", session_id="ses_1").id
    mid = store.create_session(title="mid", session_id="ses_2").id
    new = store.create_session(title="new", session_id="ses_3").id
    assert [s.id for s in store.sessions()] == [new, mid, old]

    append_all(store, short_run(old, texts=2))
    open_events = short_run(mid)[:3]
    append_all(store, open_events)

    listed = store.sessions()
    assert [s.id for s in listed] == [mid, old, new]
    by_id = {s.id: s for s in listed}
    assert (by_id[old].event_count, by_id[old].last_run_state) == (6, "completed")
    assert (by_id[mid].event_count, by_id[mid].last_run_state) == (3, "running")
    assert (by_id[new].event_count, by_id[new].last_run_state) == (0, None)
    assert by_id[mid].updated_at == open_events[-1].ts
    assert by_id[old].updated_at > by_id[old].created_at
    assert [s.id for s in store.sessions(limit=2)] == [mid, old]
    assert store.session(mid) == by_id[mid]


def test_checkpoints_keep_the_latest_per_run(store: Store) -> None:
    sid = store.create_session().id
    assert store.latest_checkpoint(sid, "run_a") is None

    data = {"messages": [{"role": "user", "content": "hi"}], "turns": 1}
    store.save_checkpoint(sid, "run_a", 7, data)
    store.save_checkpoint(sid, "run_a", 3, {"turns": 0})
    store.save_checkpoint(sid, "run_b", 9, {"other": True})
    data["turns"] = 99  # the store keeps what it was given, not a live reference

    assert store.latest_checkpoint(sid, "run_a") == (
        7,
        {"messages": [{"role": "user", "content": "hi"}], "turns": 1},
    )
    assert store.latest_checkpoint(sid, "run_b") == (9, {"other": True})
    store.save_checkpoint(sid, "run_a", 7, {"turns": 2})
    assert store.latest_checkpoint(sid, "run_a") == (7, {"turns": 2})


def test_a_checkpoints_lists_change_by_their_tails_and_read_back_whole(store: Store) -> None:
    """A save writes what a list gained (cut where it changed); the list reads back whole."""
    sid = store.create_session().id
    assert store.checkpoint_lists(sid, "run_a") == {}
    assert store.save_checkpoint(sid, "run_a", 5, {}, {"x": ListTail(0, [b"1", b"2", b"3"])})
    assert store.save_checkpoint(sid, "run_a", 9, {"n": 1}, {"y": ListTail(0, [b'"a"'])})
    assert store.checkpoint_lists(sid, "run_a") == {"x": b"[1,2,3]", "y": b'["a"]'}
    assert store.save_checkpoint(sid, "run_a", 12, {}, {"x": ListTail(3, [b"4"])})  # grew
    assert store.save_checkpoint(sid, "run_a", 14, {}, {"x": ListTail(1, [b"9"])})  # rewritten
    assert store.checkpoint_lists(sid, "run_a") == {"x": b"[1,9]", "y": b'["a"]'}
    assert store.checkpoint_lists(sid, "run_b") == {}

    # An older save changes nothing, its lists neither; a tail past a list's end is refused
    # with nothing changed.
    assert not store.save_checkpoint(sid, "run_a", 13, {"old": 1}, {"x": ListTail(0, [])})
    with pytest.raises(ValueError, match="fewer than 3"):
        store.save_checkpoint(sid, "run_a", 20, {"n": 2}, {"x": ListTail(3, [b"5"])})
    assert store.latest_checkpoint(sid, "run_a") == (14, {})
    assert store.checkpoint_lists(sid, "run_a") == {"x": b"[1,9]", "y": b'["a"]'}


def test_turn_totals_equal_a_recount_of_the_log(store: Store) -> None:
    """The totals kept as events are appended are what counting the log gives."""
    sessions = [store.create_session().id for _ in range(4)]
    for n, sid in enumerate(sessions):
        for _ in range(n):
            append_all(store, full_run(sid) if n % 2 else short_run(sid))
    append_all(store, short_run(sessions[3])[:3])  # a run still open
    kept = store.turn_totals(sessions)
    for sid in sessions:
        log = store.events(sid)
        finished = [e for e in log if e.kind == "turn_finished"]
        turns, cost, tokens = kept[sid]
        assert turns == sum(e.kind == "turn_started" for e in log)
        assert tokens == sum(e.usage.input_tokens + e.usage.output_tokens for e in finished)
        assert cost == pytest.approx(sum(e.cost_usd for e in finished))
    assert kept[sessions[3]][0] == 4


def test_what_is_stored_and_returned_is_what_reads_back(store: Store) -> None:
    """A live run sees what a resumed one will: the store keeps the event as it decodes."""
    sid = store.create_session().id
    script = RunScript(sid)
    turn = script.start()
    loose = replace(turn, attachments=[Attachment(mime_type="image/png", data="AA==")])

    stored = store.append(loose)

    assert isinstance(stored.attachments, tuple)
    assert store.events(sid) == [stored]


def test_turn_totals_count_runs_and_add_up_finished_runs_cost_and_tokens(store: Store) -> None:
    sid = store.create_session().id
    other = store.create_session().id
    append_all(store, [*short_run(sid), *short_run(sid), short_run(sid)[0]])  # 2 done, 1 open
    totals = store.turn_totals([sid, other, "ses_none"])
    turns, cost, tokens = totals[sid]
    assert (turns, tokens) == (3, 30) and cost == pytest.approx(0.02)  # 10 in + 5 out each
    assert totals[other] == totals["ses_none"] == (0, 0.0, 0)
