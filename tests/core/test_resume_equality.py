"""Resume rebuilds the exact model context: the first request after a resume equals the one
the session would have sent had it never stopped (a real HTTP model server, a real store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_server import ModelServer, Reply, sse_fixture
from moot.client.local import SessionOptions, open_client
from moot.store.sqlite import SQLiteStore
from moot.testing import drive_turn

MODEL = "anthropic/claude-haiku-4-5"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("remember the milk\n")
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return root


def options(root: Path, **fields: object) -> SessionOptions:
    return SessionOptions(cwd=root, **fields)  # type: ignore[arg-type]


async def test_the_first_request_after_resume_is_the_one_the_session_would_have_sent(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts = ("look at notes.txt", "and now say it again")
    with ModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.reply(*[Reply(body=sse_fixture("anthropic", "text"))] * 4)
        db = tmp_path / "s.db"

        straight = open_client(options(workspace, model=MODEL), store=SQLiteStore(db))
        for prompt in prompts:
            await drive_turn(straight, prompt)
        await straight.close()

        stopped = open_client(options(workspace, model=MODEL), store=SQLiteStore(db))
        await drive_turn(stopped, prompts[0])
        session = stopped.session_id
        await stopped.close()
        resumed = open_client(options(workspace, session_id=session), store=SQLiteStore(db))
        assert resumed.status().model == MODEL  # kept: no flag named another
        await drive_turn(resumed, prompts[1])
        await resumed.close()
        bodies = [request.json for request in server.requests]

    assert len(bodies) == 4
    would_have, after_resume = bodies[1], bodies[3]
    assert after_resume["messages"] == would_have["messages"]
    assert len(after_resume["messages"]) == 3  # prompt, answer, prompt: nothing pasted in
    assert after_resume["system"] == would_have["system"]
    assert after_resume["tools"] == would_have["tools"]


async def test_a_resumed_sessions_model_that_is_gone_is_reported_with_the_choices(
    workspace: Path, tmp_path: Path
) -> None:
    from moot.client import SetupError

    played = tmp_path / "played.json"
    played.write_text('["first answer", "second answer"]')
    db = tmp_path / "s.db"
    client = open_client(options(workspace, model=f"scripted:{played}"), store=SQLiteStore(db))
    await drive_turn(client, "one")
    session = client.session_id
    await client.close()
    played.unlink()

    with pytest.raises(SetupError) as refused:
        open_client(options(workspace, session_id=session), store=SQLiteStore(db))
    message = str(refused.value)
    # The model as its answers name it (a script by its whole path).
    gone = f"this session's model scripted:{played.resolve()} cannot be used any more"
    assert message.startswith(gone)
    assert "--model naming another: " in message and MODEL in message  # its key is set

    named = open_client(options(workspace, session_id=session, model=MODEL), store=SQLiteStore(db))
    assert named.status().model == MODEL  # a flag naming another model opens it
    await named.close()


async def test_a_fork_asks_what_its_session_asked_at_the_event_it_was_forked_at(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.protocol import events as ev

    prompts = ("look at notes.txt", "and now say it again")
    with ModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.reply(*[Reply(body=sse_fixture("anthropic", "text"))] * 3)
        db = tmp_path / "s.db"
        original = open_client(options(workspace, model=MODEL), store=SQLiteStore(db))
        for prompt in prompts:
            await drive_turn(original, prompt)
        first_end = original.query.events(original.session_id, kinds=("turn_finished",))[0]
        assert isinstance(first_end, ev.TurnFinished)
        fork = original.fork(first_end.seq)
        await original.close()

        forked = open_client(options(workspace, session_id=fork), store=SQLiteStore(db))
        assert forked.status().model == MODEL
        await drive_turn(forked, prompts[1])
        await forked.close()
        bodies = [request.json for request in server.requests]

    assert bodies[2]["messages"] == bodies[1]["messages"]
    assert bodies[2]["system"] == bodies[1]["system"]
