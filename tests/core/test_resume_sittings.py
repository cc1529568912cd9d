"""A stored session opened again: the log marks where each sitting begins (`session_resumed`,
with what it runs with), and the session keeps its agents as it keeps its model and mode, unless
the front end names others. Scripted models, real agent definition files, a SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot.client.local import LocalClient, SessionOptions, open_client
from moot.protocol import events as ev
from moot.store.sqlite import SQLiteStore
from moot.testing import drive_turn

HELPER = "---\nname: helper\ndescription: Answers questions.\nmodel: inherit\n---\nBe helpful.\n"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    work = tmp_path / "work"
    (work / ".moot/agents").mkdir(parents=True)
    (work / ".moot/agents/helper.md").write_text(HELPER)
    return work


def model(tmp_path: Path) -> str:
    (tmp_path / "turns.json").write_text('["one", "two", "three", "four"]')
    return f"scripted:{tmp_path / 'turns.json'}"


def names(client: LocalClient) -> list[str]:
    return [a.name for a in client.status().agents]


def sittings(client: LocalClient) -> list[tuple[str, str | None, tuple[str, ...]]]:
    found = client.query.events(client.session_id, kinds=("session_resumed",))
    return [(e.model, e.mode, e.agents) for e in found if isinstance(e, ev.SessionResumed)]


async def test_a_resumed_session_keeps_its_agents_unless_the_front_end_names_others(
    work: Path, tmp_path: Path
) -> None:
    db, scripted = tmp_path / "s.db", model(tmp_path)

    def reopen(session_id: str | None, **chosen: object) -> LocalClient:
        options = SessionOptions(cwd=work, session_id=session_id, **chosen)  # type: ignore[arg-type]
        return open_client(options, store=SQLiteStore(db))

    first = reopen(None, model=scripted, agents=())
    assert names(first) == ["moot"]
    outcome = await drive_turn(first, "one")
    (started,) = outcome.of(ev.TurnStarted)
    assert started.pool == ("moot",)  # the run records the agents it ran with
    session = first.session_id
    await first.close()

    kept = reopen(session)  # no flag: the agents it ran with, not every definition
    assert names(kept) == ["moot"]
    await kept.close()
    named = reopen(session, agents=["helper"])  # a flag names others
    assert names(named) == ["moot", "helper"]
    await named.close()
    again = reopen(session)  # and the session goes on with those
    assert names(again) == ["moot", "helper"]
    await drive_turn(again, "two")
    assert sittings(again) == [
        (scripted, "default", ("moot",)),
        (scripted, "default", ("moot", "helper")),
        (scripted, "default", ("moot", "helper")),
    ]
    await again.close()


async def test_a_recorded_agent_whose_definition_is_gone_is_left_out_and_named(
    work: Path, tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    options = SessionOptions(cwd=work, model=model(tmp_path), agents=["helper"])
    client = open_client(options, store=SQLiteStore(db))
    await drive_turn(client, "one")
    await client.close()
    (work / ".moot/agents/helper.md").unlink()

    resumed = open_client(
        SessionOptions(cwd=work, session_id=client.session_id), store=SQLiteStore(db)
    )

    assert names(resumed) == ["moot"]
    assert any(
        "this session's agents helper have no definition any more" in notice
        for notice in resumed.status().notices
    )
    await resumed.close()


async def test_each_sitting_begins_with_session_resumed_before_the_switches_its_flags_make(
    work: Path, tmp_path: Path
) -> None:
    db, scripted = tmp_path / "s.db", model(tmp_path)
    client = open_client(SessionOptions(cwd=work, model=scripted), store=SQLiteStore(db))
    await drive_turn(client, "one")
    new = client.query.events(client.session_id)
    await client.close()
    ended = len(new)

    options = SessionOptions(cwd=work, session_id=client.session_id, permission_mode="plan")
    resumed = open_client(options, store=SQLiteStore(db))
    sitting = resumed.query.events(client.session_id, after_seq=ended)
    await drive_turn(resumed, "two")
    await resumed.close()

    assert [e.kind for e in sitting] == ["session_resumed", "mode_changed"]
    first = sitting[0]
    assert isinstance(first, ev.SessionResumed)
    assert (first.model, first.mode, first.run_id, first.call_id) == (scripted, "plan", "", "")
    assert first.agents[0] == "moot" and "helper" in first.agents
    # A new session records none: its first event is its first run's.
    assert new[0].kind == "turn_started" and "session_resumed" not in {e.kind for e in new}
