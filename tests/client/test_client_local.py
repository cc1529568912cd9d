"""`open_client` and the queries over a real session in a temporary workspace, and the shipped
test kit (`FakeClient`) playing a session recorded from a real run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from moot.client import SetupError
from moot.client.local import SessionOptions, open_client, open_queries
from moot.protocol import events as ev
from moot.protocol import ops
from moot.testing import FakeClient, drive_turn
from moot.testing.drive import approve

SCRIPT = """
turns:
  - tool_calls:
      - {name: write, arguments: {path: notes.txt, content: "hello\\n"}}
  - text: "Wrote notes.txt."
"""


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "script.yaml").write_text(SCRIPT)
    monkeypatch.setenv("MOOT_SANDBOX", "none")  # no shell commands run here
    return root


def options(workspace: Path, **fields: object) -> SessionOptions:
    model = f"scripted:{workspace.parent / 'script.yaml'}"
    return SessionOptions(cwd=workspace, model=model, title="write notes", **fields)  # type: ignore[arg-type]


async def test_a_turn_through_the_client_and_what_the_queries_say_afterwards(
    workspace: Path,
) -> None:
    client = open_client(options(workspace))
    status = client.status()
    assert (status.mode, status.open_run, status.running) == ("default", None, False)
    assert status.model.startswith("scripted:") and "write" in status.tools
    assert status.sandbox.backend == "host"

    outcome = await drive_turn(client, "write notes", answer=approve)
    assert outcome.finished.output == "Wrote notes.txt."
    assert (workspace / "notes.txt").read_text() == "hello\n"
    (summary,) = client.query.sessions(workspace=str(workspace))
    assert (summary.id, summary.turns, summary.state, summary.title) == (
        client.session_id,
        1,
        "completed",
        "write notes",
    )
    assert client.query.sessions(workspace=str(workspace / "elsewhere")) == []
    every = client.query.events(client.session_id)
    assert every == outcome.events
    tail = client.query.events(client.session_id, limit=3)
    assert tail == every[-3:]
    page = client.query.events(client.session_id, before_seq=tail[0].seq, limit=2)
    assert page == every[-5:-3]
    await client.close()
    await client.close()  # twice is harmless

    queries = open_queries()
    again = queries.session(summary.id)
    assert again is not None and (again.turns, again.event_count) == (1, len(every))
    queries.close()


async def test_a_session_of_another_workspace_is_resumed_by_id_and_keeps_its_mode(
    workspace: Path,
) -> None:
    first = open_client(options(workspace, permission_mode="acceptEdits"))
    await drive_turn(first, "write notes")  # acceptEdits: nothing asks
    await first.close()
    again = open_client(options(workspace, session_id=first.session_id))
    assert again.status().mode == "acceptEdits"
    await again.close()


def test_a_bad_model_is_refused_before_any_session_exists(workspace: Path) -> None:
    with pytest.raises(SetupError, match="nosuch"):
        open_client(SessionOptions(cwd=workspace, model="nosuch/model"))
    with pytest.raises(SetupError, match="no session 'ses_missing'"):
        open_client(options(workspace, session_id="ses_missing"))
    queries = open_queries()
    assert queries.sessions() == []
    queries.close()


async def test_auto_commit_is_an_event_of_the_turn(workspace: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=workspace, check=True, capture_output=True, text=True
        ).stdout

    git("init", "-q")
    git("config", "user.name", "T")
    git("config", "user.email", "t@example.com")
    git("commit", "-q", "--allow-empty", "-m", "0")
    client = open_client(options(workspace, permission_mode="acceptEdits", auto_commit=True))
    outcome = await drive_turn(client, "write notes")
    await client.close()
    (committed,) = outcome.of(ev.AutoCommitted)
    assert committed.files == ("notes.txt",)
    kinds = [e.kind for e in outcome.events]
    assert kinds.index("auto_committed") == len(kinds) - 2  # just before turn_finished
    assert git("log", "-1", "--format=%H").strip() == committed.sha


# ---- the test kit ----------------------------------------------------------------------------


async def test_a_fake_client_plays_a_recorded_session_and_records_the_ops(
    workspace: Path, tmp_path: Path
) -> None:
    client = open_client(options(workspace))
    recorded = await drive_turn(client, "write notes", answer=approve)
    export = (
        await asyncio.to_thread(
            subprocess.run,
            [
                sys.executable,
                "-m",
                "moot.cli",
                "sessions",
                "export",
                client.session_id,
                "--format",
                "json",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    ).stdout
    await client.close()
    (tmp_path / "export.json").write_text(export)

    fake = FakeClient.from_export(tmp_path / "export.json")
    watch = fake.subscribe()
    first = fake.submit(ops.UserTurn(text="write notes"))
    (asked,) = [e for e in fake.log if isinstance(e, ev.ApprovalRequested)]
    assert fake.log[-1] == asked  # it pauses where the real session waited for the person
    assert fake.status().running
    fake.submit(approve(asked))
    assert isinstance(fake.log[-1], ev.TurnFinished) and not fake.status().running
    assert [type(o) for o in fake.ops] == [ops.UserTurn, ops.Approve]
    assert fake.ops[1] == ops.Approve(tool_call_id=asked.tool_call_id, call_id=asked.call_id)

    played = [e async for e in _until_finished(watch)]
    strip = {"ts", "session_id", "submission_id"}

    def plain(event: ev.Event) -> dict[str, object]:
        return {k: v for k, v in msgspec.to_builtins(event).items() if k not in strip}

    assert [plain(e) for e in played] == [plain(e) for e in recorded.events]
    assert {e.submission_id for e in played[: played.index(asked) + 1]} == {first}
    assert fake.query.sessions()[0].turns == 1
    assert json.loads(export)["session"]["id"] == client.session_id


async def test_a_fake_client_ends_an_open_turn_on_interrupt_and_plays_mode_changes() -> None:
    started = ev.TurnStarted(run_id="run_1", call_id="run_1", agent="moot", prompt="go")
    fake = FakeClient([started, ev.TextDelta(run_id="run_1", call_id="run_1", text="hi")])
    fake.submit(ops.UserTurn(text="go"))
    assert fake.status().running
    fake.submit(ops.Interrupt())
    assert fake.log[-1].kind == "turn_finished" and not fake.status().running
    fake.submit(ops.SetMode(mode="plan"))
    fake.submit(ops.SetMode(mode="plan"))  # no change, no event
    assert [e.kind for e in fake.log].count("mode_changed") == 1
    assert fake.status().mode == "plan"


async def _until_finished(subscription):  # type: ignore[no-untyped-def]
    async for event in subscription:
        yield event
        if isinstance(event, ev.TurnFinished):
            return


async def test_a_session_left_without_a_turn_is_not_kept(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.store.sqlite import SQLiteStore

    db = workspace.parent / "s.db"
    idle = open_client(options(workspace), store=SQLiteStore(db))
    idle.submit(ops.Rename(title="nothing said"))  # session events are no turn
    await idle.close()
    used = open_client(options(workspace), store=SQLiteStore(db))
    await drive_turn(used, "write notes", answer=approve)
    await used.close()
    resumed = open_client(options(workspace, session_id=used.session_id), store=SQLiteStore(db))
    await resumed.close()  # a sitting without a turn leaves the session's turns as they were
    monkeypatch.setenv("MOOT_SANDBOX", "no-such-sandbox")
    with pytest.raises(SetupError, match="MOOT_SANDBOX"):
        open_client(options(workspace), store=SQLiteStore(db))

    with SQLiteStore(db) as store:
        assert [s.id for s in store.sessions()] == [used.session_id]


async def test_closing_a_session_after_a_turn_reads_no_event_back(workspace: Path) -> None:
    """Closing asked whether the session held a turn by reading its first `turn_started` back,
    which built the decoder of every event kind: milliseconds at the end of every `moot -p`.
    The session's row says it (`last_run_state`, set by the turn's first event)."""
    from moot.protocol.events import _decoder
    from moot.store.sqlite import SQLiteStore

    _decoder.cache_clear()
    client = open_client(options(workspace), store=SQLiteStore(workspace.parent / "s.db"))
    await drive_turn(client, "write notes", answer=approve)
    await client.close()

    assert _decoder.cache_info().currsize == 0
    with SQLiteStore(workspace.parent / "s.db") as store:
        assert [s.id for s in store.sessions()] == [client.session_id]


async def test_a_script_that_bounds_its_context_shows_how_full_it_is(workspace: Path) -> None:
    """A scripted model has no catalog entry: its status and `/context` give the window its
    script names (`context_window:`), so the status line's `ctx %` shows offline too."""
    bounded = workspace.parent / "bounded.yaml"
    bounded.write_text("context_window: 20000\n" + SCRIPT)
    client = open_client(SessionOptions(cwd=workspace, model=f"scripted:{bounded}"))
    assert client.status().context_window == 20_000
    assert client.context().context_window == 20_000
    await client.close()
    plain = open_client(options(workspace))
    assert plain.status().context_window is None  # a script without one is unbounded
    await plain.close()


async def test_a_client_changes_its_session_only_through_ops_or_the_one_admin_protocol(
    workspace: Path,
) -> None:
    """Everything that changes a session is an op; what is not one (a fork creates another
    session, the person's key never enters a log) is `SessionAdmin`, the one admin protocol.
    Fails on the old code: `Client` had `fork` and `restore_files`, and `save_key` was a
    protocol of its own."""
    from moot.protocol import client as surface

    assert not [n for n in ("fork", "restore_files", "save_key") if hasattr(surface.Client, n)]
    assert not hasattr(surface, "KeyStore")
    client = open_client(options(workspace))
    await drive_turn(client, "write notes", answer=approve)
    assert isinstance(client, surface.SessionAdmin)
    fork = client.fork()
    (forked,) = [e for e in client.query.events(fork) if isinstance(e, ev.SessionForked)]
    await client.close()
    assert forked.source == client.session_id
    assert isinstance(FakeClient(), surface.SessionAdmin)


async def test_the_added_directories_are_on_the_status(workspace: Path) -> None:
    other = workspace.parent / "other"
    other.mkdir()
    (workspace.parent / "link").symlink_to(other)

    client = open_client(options(workspace, add_dirs=[str(workspace.parent / "link")]))

    assert client.status().added_dirs == (str(other),)  # the real path: an MCP client's root
    await client.close()
