"""`/rewind` against a real session (scripted model, real files, real store): files come back
byte-exact from the snapshots, files made since are removed, and the conversation goes on in a
fork of the session before the chosen turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from moot.client.local import SessionOptions, open_client
from moot.commands.builtin import builtin_commands
from moot.protocol import events as ev
from moot.protocol import ops
from moot.store.sqlite import SQLiteStore
from moot.testing import drive_turn

ORIGINAL = b'def greet():\r\n    return "hi"\r\n# caf\xc3\xa9 \xe2\x82\xac\r\n'
SCRIPT = """
turns:
  - tool_calls:
      - {name: read, arguments: {path: greet.py}}
  - tool_calls:
      - {name: edit, arguments: {path: greet.py, old: "hi", new: "hello"}}
      - {name: write, arguments: {path: made/deeper/new.txt, content: "new\\n"}}
  - text: "done"
  - tool_calls:
      - {name: read, arguments: {path: greet.py}}
  - tool_calls:
      - {name: edit, arguments: {path: greet.py, old: "hello", new: "hey"}}
  - text: "done again"
"""


class Context:
    """A front end that answers pickers from a list and records what it is told."""

    def __init__(self, client, picks: Sequence[str]) -> None:  # type: ignore[no-untyped-def]
        self.client = client
        self.picks = list(picks)
        self.said: list[str] = []
        self.offered: list[list[tuple[str, str]]] = []
        self.opened: list[str] = []

    shows_refusals = False  # says what the session refused

    def say(self, text: str, **_: object) -> None:
        self.said.append(text)

    async def pick(self, title: str, choices: Sequence[tuple[str, str]]) -> str | None:
        self.offered.append(list(choices))
        return self.picks.pop(0)

    async def open_session(self, session_id: str) -> None:
        self.opened.append(session_id)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    root = tmp_path / "project"
    root.mkdir()
    (root / "greet.py").write_bytes(ORIGINAL)
    (tmp_path / "edit.yaml").write_text(SCRIPT)
    return root


async def two_turns(workspace: Path, db: Path):  # type: ignore[no-untyped-def]
    model = f"scripted:{workspace.parent / 'edit.yaml'}"
    options = SessionOptions(cwd=workspace, model=model, permission_mode="acceptEdits")
    client = open_client(options, store=SQLiteStore(db))
    for prompt in ("make it say hello", "now hey"):
        outcome = await drive_turn(client, prompt)
        assert outcome.finished.state == "completed", outcome
    assert (workspace / "greet.py").read_bytes() != ORIGINAL
    assert (workspace / "made" / "deeper" / "new.txt").exists()
    return client


async def test_rewind_both_restores_the_files_and_goes_on_in_a_fork(
    workspace: Path, tmp_path: Path
) -> None:
    client = await two_turns(workspace, tmp_path / "s.db")
    first_run = client.query.events(client.session_id, kinds=("turn_started",))[0].run_id
    context = Context(client, [first_run, "both"])

    await builtin_commands().run(context, "/rewind")  # type: ignore[arg-type]

    labels = [label for _, label in context.offered[0]]
    assert labels[0].startswith("now hey  ·  turn 2  ·  ")
    assert labels[1].startswith("make it say hello  ·  turn 1  ·  ")
    assert (workspace / "greet.py").read_bytes() == ORIGINAL  # byte-exact, CRLF and all
    assert not (workspace / "made").exists()  # made since: removed, its directories too
    assert "their command lines write" in " ".join(context.said)
    (fork,) = context.opened
    assert client.query.session(fork).turns == 0  # before the first turn: nothing of it
    assert client.query.session(client.session_id).turns == 2  # the session stays as it was
    await client.close()


async def test_rewind_code_only_keeps_the_conversation(workspace: Path, tmp_path: Path) -> None:
    client = await two_turns(workspace, tmp_path / "s.db")
    second_run = client.query.events(client.session_id, kinds=("turn_started",))[1].run_id
    context = Context(client, [second_run, "code"])

    await builtin_commands().run(context, "/rewind")  # type: ignore[arg-type]

    assert (workspace / "greet.py").read_bytes() == ORIGINAL.replace(b"hi", b"hello")
    assert (workspace / "made" / "deeper" / "new.txt").read_text() == "new\n"  # turn 1's
    assert context.opened == []
    assert any(s.startswith("files restored: greet.py") for s in context.said)
    await client.close()


async def test_rewind_conversation_only_leaves_the_files(workspace: Path, tmp_path: Path) -> None:
    client = await two_turns(workspace, tmp_path / "s.db")
    turns = client.query.events(client.session_id, kinds=("turn_started",))
    context = Context(client, [turns[1].run_id, "conversation"])
    edited = (workspace / "greet.py").read_bytes()

    await builtin_commands().run(context, "/rewind")  # type: ignore[arg-type]

    assert (workspace / "greet.py").read_bytes() == edited
    (fork,) = context.opened
    prompts = [e.prompt for e in client.query.events(fork, kinds=("turn_started",))
               if isinstance(e, ev.TurnStarted)]  # fmt: skip
    assert prompts == ["make it say hello"]
    await client.close()


SHELL_SCRIPT = """
turns:
  - tool_calls:
      - {name: bash, arguments: {command: "echo pwned > greet.py; echo made > made.txt"}}
      - {name: bash, arguments: {command: "echo x | tee -a notes.txt >/dev/null && rm gone.txt"}}
  - text: "done"
"""


async def test_rewind_restores_the_files_a_command_line_wrote(
    workspace: Path, tmp_path: Path
) -> None:
    """A write through `>`, `tee` or `rm` is kept before the command runs, as an edit is.
    Fails on the old code: greet.py stayed `pwned`, gone.txt gone and made.txt there."""
    (workspace / "notes.txt").write_bytes(b"kept\r\n")
    (workspace / "gone.txt").write_bytes(b"\x00bytes\xff")
    (tmp_path / "shell.yaml").write_text(SHELL_SCRIPT)
    model = f"scripted:{tmp_path / 'shell.yaml'}"
    options = SessionOptions(
        cwd=workspace, model=model, permission_mode="acceptEdits",
        allowed_tools=("Bash(echo:*)", "Bash(tee:*)", "Bash(rm:*)"),
    )  # fmt: skip
    client = open_client(options, store=SQLiteStore(tmp_path / "s.db"))
    outcome = await drive_turn(client, "break things")
    assert outcome.finished.state == "completed", outcome
    assert not of_kind(outcome.events, ev.ApprovalRequested)  # acceptEdits: edits in the workspace
    assert (workspace / "greet.py").read_text() == "pwned\n"
    assert not (workspace / "gone.txt").exists()
    run = client.query.events(client.session_id, kinds=("turn_started",))[0].run_id
    context = Context(client, [run, "code"])

    await builtin_commands().run(context, "/rewind")  # type: ignore[arg-type]

    assert (workspace / "greet.py").read_bytes() == ORIGINAL
    assert (workspace / "notes.txt").read_bytes() == b"kept\r\n"
    assert (workspace / "gone.txt").read_bytes() == b"\x00bytes\xff"
    assert not (workspace / "made.txt").exists()
    await client.close()


def of_kind(events: Sequence[ev.Event], kind: type) -> list[ev.Event]:
    return [e for e in events if isinstance(e, kind)]


async def answers_to(client, *submitted: str) -> dict[str, ev.Event]:  # type: ignore[no-untyped-def]
    """The first event answering each submission (taken from a replay of the whole log)."""
    found: dict[str, ev.Event] = {}
    watch = client.subscribe(after_seq=0)
    async for event in watch:
        if event.submission_id in submitted and event.submission_id not in found:
            found[event.submission_id] = event
        if len(found) == len(submitted):
            break
    watch.close()
    return found


async def test_restoring_files_is_an_op_answered_by_an_event(
    workspace: Path, tmp_path: Path
) -> None:
    """Fails on the old code: no op restored files; the client did it outside the contract,
    and raised across it (`KeyError`, `RuntimeError`) where the session could not."""
    client = await two_turns(workspace, tmp_path / "s.db")
    first = client.query.events(client.session_id, kinds=("turn_started",))[0].run_id
    unknown = client.submit(ops.RestoreFiles(run_id="run_nope"))
    restore = client.submit(ops.RestoreFiles(run_id=first))
    answers = await answers_to(client, unknown, restore)
    await client.close()

    refused, restored = answers[unknown], answers[restore]
    assert isinstance(refused, ev.OpRefused) and refused.op == "restore_files"
    assert refused.reason == f"no turn 'run_nope' in session {client.session_id}"
    assert isinstance(restored, ev.FilesRestored)
    assert (restored.before_run, restored.failures) == (first, ())
    assert restored.restored == ("greet.py", "made/deeper/new.txt")
    assert (workspace / "greet.py").read_bytes() == ORIGINAL
    assert not (workspace / "made").exists()


HANG_SCRIPT = """
turns:
  - tool_calls:
      - {name: bash, arguments: {command: "sleep 120"}}
  - text: "done"
"""


async def test_files_are_not_restored_while_a_turn_runs(workspace: Path, tmp_path: Path) -> None:
    """Fails on the old code: no op restored files (the client raised `RuntimeError`)."""
    (tmp_path / "hang.yaml").write_text(HANG_SCRIPT)
    model = f"scripted:{tmp_path / 'hang.yaml'}"
    options = SessionOptions(cwd=workspace, model=model, permission_mode="bypassPermissions")
    client = open_client(options, store=SQLiteStore(tmp_path / "s.db"))
    watch = client.subscribe()
    client.submit(ops.UserTurn(text="wait"))
    busy, refused = "", None
    async for event in watch:
        if isinstance(event, ev.ToolStarted):
            busy = client.submit(ops.RestoreFiles(run_id=event.run_id))
        if isinstance(event, ev.OpRefused) and event.submission_id == busy:
            refused = event
            client.submit(ops.Interrupt())
        if isinstance(event, ev.TurnFinished):
            break
    watch.close()
    await client.close()
    assert refused is not None
    assert refused.reason == "a turn is running: interrupt it first"
