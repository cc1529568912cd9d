"""`moot -c`, `moot -r`, and `moot sessions list | delete | fork | prune` end to end: real
subprocesses, scripted models, a private MOOT_HOME per test."""

from __future__ import annotations

import io
import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from moot.cli.args import PICK, parse
from moot.cli.sessions import pick
from moot.client.queries import StoreQueries
from moot.client.upkeep import SessionUpkeep
from moot.protocol import events as ev
from moot.protocol.client import SessionSummary
from moot.protocol.titles import title_of
from moot.store.memory import MemoryStore
from moot.store.sqlite import SQLiteStore
from moot_cli import RunMoot, moot_command, moot_env
from store_builders import RunScript
from test_cli import parse_stream, script


def session_of(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return parse_stream(result.stdout)[0].session_id


def run(moot: RunMoot, model: str, task: str, *more: str) -> str:
    return session_of(moot("-p", task, "--model", model, "--output-format", "events", *more))


def test_continue_headless_goes_on_with_the_latest_session_of_this_directory(
    moot: RunMoot, tmp_path: Path
) -> None:
    model = script(tmp_path, ["one", "two", "three"])
    run(moot, model, "first")
    latest = run(moot, model, "second")

    again = run(moot, model, "third", "-c")

    assert again == latest
    listing = moot("sessions", "list").stdout.splitlines()
    assert len(listing) == 2 and listing[0].startswith(latest)


def test_continue_with_no_session_here_is_a_usage_error(moot: RunMoot, tmp_path: Path) -> None:
    model = script(tmp_path, ["one"])
    result = moot("-p", "go", "--model", model, "-c")
    assert result.returncode == 2
    assert "no earlier session in this directory" in result.stderr


def test_resume_without_an_id_and_no_terminal_asks_for_one(moot: RunMoot, tmp_path: Path) -> None:
    model = script(tmp_path, ["one", "two"])
    run(moot, model, "first")
    result = moot("-p", "go on", "--model", model, "-r")
    assert result.returncode == 2
    assert "moot -r SESSION" in result.stderr


def one_run(session_id: str, prompt: str, run_id: str | None = None) -> list[ev.Event]:
    from moot.protocol.states import RunState

    s = RunScript(session_id, run_id)
    return [s.start(prompt), s.move(RunState.MODEL_PENDING), s.move(RunState.DECISION_RECEIVED),
            s.finish()]  # fmt: skip


def test_titles_come_from_the_first_prompt_and_rename_replaces_them(tmp_path: Path) -> None:
    for kept in (SQLiteStore(tmp_path / "s.db"), MemoryStore()):
        info = kept.create_session(workspace="/w")
        for event in one_run(info.id, "\n  fix   the\tparser\nnow"):
            kept.append(event)
        assert kept.session(info.id).title == "fix the parser"
        for event in one_run(info.id, "second"):
            kept.append(event)
        assert kept.session(info.id).title == "fix the parser"  # the first prompt's only
        kept.append(ev.SessionRenamed(session_id=info.id, title="parser work"))
        assert kept.session(info.id).title == "parser work"
    assert title_of("x" * 200) == "x" * 80


async def test_rename_is_a_session_event_answered_through_the_command_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moot.client.local import SessionOptions, open_client
    from moot.commands.builtin import builtin_commands

    monkeypatch.setenv("MOOT_SANDBOX", "none")
    model = script(tmp_path, ["one"])
    store = MemoryStore()
    client = open_client(SessionOptions(cwd=tmp_path, model=model), store=store)
    said: list[str] = []

    class Context:
        def __init__(self) -> None:
            self.client = client

        shows_refusals = False  # says what the session refused

        def say(self, text: str, **_: object) -> None:
            said.append(text)

    registry = builtin_commands()
    await registry.run(Context(), "/rename  parser   work ")  # type: ignore[arg-type]
    await registry.run(Context(), "/rename")  # type: ignore[arg-type]
    assert said[0] == f"session {client.session_id}: parser work"
    assert said[1].startswith("/rename TITLE")
    assert store.session(client.session_id).title == "parser work"
    (renamed,) = store.events(client.session_id, kinds=("session_renamed",))
    assert (renamed.title, renamed.previous) == ("parser work", "")
    await client.close()


def test_the_argument_parser_tells_a_session_from_a_task() -> None:
    assert parse(["-r"]).resume == PICK
    assert parse(["-r", "ses_1"]).resume == "ses_1"
    options = parse(["-r", "fix the bug"])
    assert (options.resume, options.task) == (PICK, "fix the bug")
    assert parse(["--resume", ""]).resume == ""
    assert parse(["sessions", "prune", "--older-than", "30d"]).older_than == 30 * 86400


def summary(session_id: str, title: str) -> SessionSummary:
    now = datetime.now(UTC)
    return SessionSummary(id=session_id, title=title, workspace="/w", created_at=now,
                          updated_at=now, turns=1, cost_usd=0.0, state="completed",
                          event_count=3)  # fmt: skip


def test_the_picker_takes_a_number_or_searches() -> None:
    sessions = [summary("ses_a", "fix the parser"), summary("ses_b", "write the docs")]
    shown = io.StringIO()
    assert pick(sessions, io.StringIO("2\n"), shown) == "ses_b"
    assert "write the docs" in shown.getvalue() and "1 turns" in shown.getvalue()
    assert pick(sessions, io.StringIO("docs\n1\n"), io.StringIO()) == "ses_b"
    assert pick(sessions, io.StringIO("nothing\n\n"), io.StringIO()) is None
    assert pick(sessions, io.StringIO(""), io.StringIO()) is None


def test_list_shows_this_directorys_sessions_and_all_shows_every_one(
    moot: RunMoot, tmp_path: Path
) -> None:
    model = script(tmp_path, ["one", "two"])
    here = run(moot, model, "here")
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    other = session_of(subprocess.run(
        moot_command("-p", "there", "--model", model, "--output-format", "events"),
        cwd=elsewhere, capture_output=True, text=True, timeout=30,
        env=moot_env(tmp_path / "home"),
    ))  # fmt: skip

    mine = moot("sessions", "list").stdout
    every = moot("sessions", "list", "--all").stdout.splitlines()

    assert here in mine and other not in mine
    assert [line.split()[0] for line in every] == [here, other]  # this directory's first
    assert every[1].endswith(f"  in {elsewhere}") and " in " not in every[0]  # whose it is


def test_delete_fork_and_prune(moot: RunMoot, tmp_path: Path) -> None:
    model = script(tmp_path, ["one", "two", "three"])
    first = run(moot, model, "first")
    run(moot, model, "second", "-r", first)

    original = json.loads(moot("sessions", "export", first, "--format", "json").stdout)
    end = next(e["seq"] for e in original["events"] if e["kind"] == "turn_finished")
    forked = moot("sessions", "fork", first, "--at", str(end))
    assert forked.returncode == 0, forked.stderr
    fork = forked.stdout.split()[3].rstrip(";")
    exported = json.loads(moot("sessions", "export", fork, "--format", "json").stdout)
    prompts = [e["prompt"] for e in exported["events"] if e["kind"] == "turn_started"]
    assert prompts == ["first"]
    whole = moot("sessions", "fork", first).stdout.split()[3].rstrip(";")
    exported = json.loads(moot("sessions", "export", whole, "--format", "json").stdout)
    prompts = [e["prompt"] for e in exported["events"] if e["kind"] == "turn_started"]
    assert prompts == ["first", "second"]
    assert exported["session"]["title"] == "first (fork)"

    assert moot("sessions", "delete", fork).returncode == 0
    assert moot("sessions", "show", fork).returncode == 2
    assert moot("sessions", "prune", "--older-than", "1d").stdout == "pruned 0 sessions\n"
    assert moot("sessions", "delete", "ses_nothing").returncode == 2


def test_prune_deletes_old_sessions_and_keeps_shared_snapshot_blobs(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    old, new = store.create_session(workspace="/w"), store.create_session(workspace="/w")
    digest = store.put_blob(b"shared")
    only_old = store.put_blob(b"only the old one")
    for info in (old, new):
        store.append(one_run(info.id, "go", "r1")[0])
        store.record_snapshot(info.id, "r1", "a.txt", digest)
    store.record_snapshot(old.id, "r1", "b.txt", only_old)
    upkeep = SessionUpkeep(store)

    later = datetime.now(UTC) + timedelta(days=31)
    assert sorted(upkeep.prune(timedelta(days=30), now=later)) == sorted([old.id, new.id])
    assert store.sessions() == []

    store2 = SQLiteStore(tmp_path / "t.db")
    a, b = store2.create_session(), store2.create_session()
    shared = store2.put_blob(b"shared")
    store2.append(one_run(a.id, "go", "r1")[0])
    store2.append(one_run(b.id, "go", "r1")[0])
    store2.record_snapshot(a.id, "r1", "x", shared)
    store2.record_snapshot(b.id, "r1", "x", shared)
    SessionUpkeep(store2).delete(a.id)
    assert store2.get_blob(shared) == b"shared"  # b still names it
    SessionUpkeep(store2).delete(b.id)
    with pytest.raises(KeyError):
        store2.get_blob(shared)
    assert StoreQueries(store2).sessions() == []


def test_a_session_a_runtime_holds_is_not_deleted(tmp_path: Path) -> None:
    from moot.client.errors import SessionBusy

    store = SQLiteStore(tmp_path / "s.db")
    info = store.create_session()
    claim = store.claim(info.id)
    other = SQLiteStore(tmp_path / "s.db")
    with pytest.raises(SessionBusy):
        SessionUpkeep(other).delete(info.id)
    claim.release()
    SessionUpkeep(other).delete(info.id)
    assert other.session(info.id) is None


def test_a_fork_inside_a_turn_is_refused_naming_the_seqs_that_would_work(
    moot: RunMoot, tmp_path: Path
) -> None:
    model = script(tmp_path, ["one", "two"])
    first = run(moot, model, "first")
    run(moot, model, "second", "-r", first)
    events = json.loads(moot("sessions", "export", first, "--format", "json").stdout)["events"]
    starts = [e["seq"] for e in events if e["kind"] == "turn_started"]
    ends = [e["seq"] for e in events if e["kind"] == "turn_finished"]

    inside_first = moot("sessions", "fork", first, "--at", "3")
    inside_second = moot("sessions", "fork", first, "--at", str(starts[1] + 1))

    assert inside_first.returncode == 2 and inside_first.stdout == ""
    assert inside_first.stderr == (
        f"moot: event 3 is inside turn 1 ('first', events 1..{ends[0]}), and a fork shares "
        f"whole turns: nothing comes before it to share, or at {ends[0]} to keep it\n"
    )
    assert inside_second.returncode == 2
    assert (
        f"inside turn 2 ('second', events {starts[1]}..{ends[1]}), and a fork shares whole "
        f"turns: fork at {starts[1] - 1} to leave it out, or at {ends[1]} to keep it"
    ) in inside_second.stderr
    listed = moot("sessions", "list").stdout.splitlines()
    assert len(listed) == 1  # no empty fork was made


def test_a_fork_inside_a_run_that_never_finished_offers_the_seq_before_it() -> None:
    store = MemoryStore()
    info = store.create_session(workspace="/w")
    for event in one_run(info.id, "done"):
        store.append(event)
    for event in one_run(info.id, "crashed")[:2]:  # killed mid-run: no turn_finished
        store.append(event)

    with pytest.raises(KeyError) as refused:
        SessionUpkeep(store).fork(info.id, 6)

    assert refused.value.args[0] == (
        "event 6 is inside turn 2 ('crashed', from event 5), which has not finished, and a "
        "fork shares whole turns: fork at 4 to leave it out"
    )
    assert len(store.sessions()) == 1
    whole = SessionUpkeep(store).fork(info.id)  # to the end: the open run is left out
    assert [e.kind for e in store.events(whole)][-2:] == ["turn_finished", "session_forked"]


def test_a_renamed_sessions_fork_is_titled_as_the_fork_of_that_title() -> None:
    store = MemoryStore()
    info = store.create_session(workspace="/w")
    for event in one_run(info.id, "fix the parser"):
        store.append(event)
    store.append(ev.SessionRenamed(session_id=info.id, title="parser work"))

    fork = SessionUpkeep(store).fork(info.id)
    early = SessionUpkeep(store).fork(info.id, 4)  # before the rename

    assert store.session(fork).title == "parser work (fork)"
    assert store.session(early).title == "parser work (fork)"
    renames = [e for e in store.events(fork) if isinstance(e, ev.SessionRenamed)]
    assert [(e.title, e.previous) for e in renames] == [
        ("parser work", ""),
        ("parser work (fork)", "parser work"),
    ]


@pytest.mark.parametrize("action", ["list", "show", "export"])
def test_a_reader_that_goes_away_ends_the_listing_quietly(
    moot: RunMoot, tmp_path: Path, action: str
) -> None:
    import os

    session = run(moot, script(tmp_path, ["one"]), "first")
    # A pipe whose reader has already gone: the first write fails, as after `| true`.
    read_end, write_end = os.pipe()
    os.close(read_end)
    args = {"list": (), "show": (session,), "export": (session, "--format", "json")}[action]
    try:
        ended = subprocess.run(
            moot_command("sessions", action, *args),
            stdin=subprocess.DEVNULL, stdout=write_end, stderr=subprocess.PIPE, text=True,
            cwd=tmp_path, env=moot_env(tmp_path / "home"), timeout=30,
        )  # fmt: skip
    finally:
        os.close(write_end)

    assert ended.stderr == ""
    assert ended.returncode == 141  # 128 + SIGPIPE, what a shell says of `ls | true`
