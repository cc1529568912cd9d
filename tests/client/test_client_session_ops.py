"""The contract's session ops and queries against a real session (`open_client`, the scripted
provider, a temporary git repository): `SetModel`, `RunTool` (the model's tools and the
person's own), `@path` attachments, edit diffs, and the `context`, `permissions` and `models`
queries."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from moot.client.local import SessionOptions, open_client
from moot.commands.answers import answer, run_tool
from moot.commands.registry import CommandError
from moot.protocol import events as ev
from moot.protocol import ops
from moot.testing import drive_turn
from moot.testing.drive import approve
from sandbox_contract import BACKENDS, require

FIRST = """
turns:
  - text: "first script, turn 1"
  - text: "first script, turn 2"
"""
SECOND = """
turns:
  - text: "second script, turn 1"
  - text: "second script, turn 2"
"""
EDIT = """
turns:
  - tool_calls: [{name: read, arguments: {path: greet.py}}]
  - tool_calls:
      - {name: edit, arguments: {path: greet.py, old: "hi", new: "hello"}}
  - tool_calls: [{name: write, arguments: {path: new.txt, content: "one\\ntwo\\n"}}]
  - text: "done"
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (tmp_path / "first.yaml").write_text(FIRST)
    (tmp_path / "second.yaml").write_text(SECOND)
    (tmp_path / "edit.yaml").write_text(EDIT)
    (root / "greet.py").write_text(
        'def greet():\n    return "hi"\n\n\nclass Door:\n    def open(self):\n        pass\n'
    )
    (root / "notes.txt").write_text("remember the milk\n")
    (root / ".env").write_text("TOKEN=sk-secret\n")
    (root / ".moot").mkdir()
    (root / ".moot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}})
    )
    git(root, "init", "-q")
    git(root, "config", "user.name", "T")
    git(root, "config", "user.email", "t@example.com")
    git(root, "add", "greet.py", "notes.txt")
    git(root, "commit", "-q", "-m", "start")
    monkeypatch.setenv("MOOT_SANDBOX", "none")  # bash runs on the host here (one test: bwrap)
    return root


def script(workspace: Path, name: str) -> str:
    return f"scripted:{workspace.parent / name}"


def options(workspace: Path, model: str | None = "first.yaml", **fields: object) -> SessionOptions:
    chosen = script(workspace, model) if model else None
    return SessionOptions(cwd=workspace, model=chosen, **fields)  # type: ignore[arg-type]


# ---- SetModel ------------------------------------------------------------------------------------


async def test_set_model_switches_the_next_turn_and_a_resumed_session_keeps_it(
    workspace: Path,
) -> None:
    client = open_client(options(workspace))
    assert (await drive_turn(client, "one")).finished.output == "first script, turn 1"
    changed = await answer(
        client, ops.SetModel(model=script(workspace, "second.yaml")), ["model_changed"]
    )
    assert isinstance(changed, ev.ModelChanged)
    assert (changed.agent, changed.previous) == ("moot", script(workspace, "first.yaml"))
    assert client.status().model == script(workspace, "second.yaml")
    # The new script starts at its own first turn: it is moved past none of the old one's.
    assert (await drive_turn(client, "two")).finished.output == "second script, turn 1"
    session = client.session_id
    await client.close()

    again = open_client(options(workspace, model=None, session_id=session))
    assert again.status().model == script(workspace, "second.yaml")
    assert (await drive_turn(again, "three")).finished.output == "second script, turn 2"
    await again.close()

    named = open_client(options(workspace, model="first.yaml", session_id=session))
    assert named.status().model == script(workspace, "first.yaml")
    kinds = [e.kind for e in named.query.events(session, kinds=("model_changed",))]
    assert kinds == ["model_changed", "model_changed"]  # naming one is a switch like any other
    # Back on the first script, it goes on where this session left it (the log shows one call
    # to it), in this process or any other.
    assert (await drive_turn(named, "four")).finished.output == "first script, turn 2"
    await named.close()


async def test_set_model_refuses_what_cannot_run_and_says_what_would(workspace: Path) -> None:
    client = open_client(options(workspace))
    with pytest.raises(CommandError, match=r"unknown provider 'nosuch'.*known: .*anthropic"):
        await answer(client, ops.SetModel(model="nosuch/model"), ["model_changed"])
    with pytest.raises(CommandError, match="no API key for anthropic: set ANTHROPIC_API_KEY"):
        await answer(client, ops.SetModel(model="anthropic/claude-sonnet-4-5"), ["model_changed"])
    with pytest.raises(CommandError, match="no agent 'critic'"):
        await answer(client, ops.SetModel(model="x/y", agent="critic"), ["model_changed"])
    assert client.status().model == script(workspace, "first.yaml")
    await client.close()


# ---- RunTool: the model's tools, as the person ---------------------------------------------------


async def test_the_person_runs_the_sessions_tools_and_no_model_sees_them(workspace: Path) -> None:
    client = open_client(options(workspace))
    found = await run_tool(client, "grep", {"pattern": "milk"})
    assert not found.is_error and "notes.txt" in found.content
    assert (await run_tool(client, "git_log", {"limit": 1})).content.count("start") == 1
    shell = await run_tool(client, "bash", {"command": "echo hi from the shell"})
    assert "hi from the shell" in shell.content and not shell.is_error
    # A deny rule holds for the person too: `read .env` is refused, grep does not show it.
    with pytest.raises(CommandError, match=r"denied by Read\(./.env\)"):
        await run_tool(client, "read", {"path": ".env"})
    assert "sk-secret" not in (await run_tool(client, "grep", {"pattern": "TOKEN"})).content
    with pytest.raises(CommandError, match=r"no tool 'nosuch'.*tools: .*bash.*undo"):
        await run_tool(client, "nosuch")
    bad = await run_tool(client, "grep", {"patern": "x"})
    assert bad.is_error and "pattern" in bad.content

    outcome = await drive_turn(client, "one")
    session = client.session_id
    await client.close()
    # Session events, not run events: no model conversation holds them.
    reopened = open_client(options(workspace, session_id=session))
    history = reopened.context().parts
    events = reopened.query.events(session)
    ran = [e for e in events if isinstance(e, ev.ToolRan)]
    assert [e.tool for e in ran] == ["grep", "git_log", "bash", "grep", "grep"]
    assert all(not e.run_id and not e.call_id for e in ran)
    conversation = json.dumps(reopened._runtime.conversation(), default=str)
    assert "milk" not in conversation and "hi from the shell" not in conversation
    assert outcome.finished.output == "first script, turn 1"
    top = [p.name for p in history if not p.name.startswith(" ")]
    assert top == ["system prompt", "tools", "messages"]
    assert {"  template", "  memory"} <= {p.name for p in history}  # the prompt's pieces
    await reopened.close()


async def test_an_interrupt_stops_the_persons_command(workspace: Path) -> None:
    client = open_client(options(workspace))
    watch = client.subscribe()
    submission = client.submit(ops.RunTool(tool="bash", arguments={"command": "sleep 30"}))
    client.submit(ops.Interrupt())
    async for event in watch:
        if event.submission_id == submission:
            break
    assert isinstance(event, ev.ToolRan)
    assert event.interrupted and event.is_error and event.duration_ms < 20_000
    await client.close()


async def test_the_persons_command_runs_in_the_sessions_sandbox(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(BACKENDS["bubblewrap"])
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    client = open_client(options(workspace))
    assert client.status().sandbox.backend == "bubblewrap"
    # `cat .env` names the file, so the deny rule refuses it before it runs ...
    with pytest.raises(CommandError, match=r"denied by Read\(./.env\)"):
        await run_tool(client, "bash", {"command": "cat .env"})
    # ... and what names no file runs masked: the secret is not there to find.
    found = await run_tool(client, "bash", {"command": "grep -r TOKEN . || true"})
    assert "sk-secret" not in found.content
    wrote = await run_tool(client, "bash", {"command": "touch .git/planted"})
    assert wrote.is_error and not (workspace / ".git" / "planted").exists()
    await client.close()


# ---- RunTool: the person's own tools -------------------------------------------------------------


async def test_undo_takes_back_moots_last_commit(workspace: Path) -> None:
    client = open_client(
        options(workspace, model="edit.yaml", permission_mode="acceptEdits", auto_commit=True)
    )
    outcome = await drive_turn(client, "say hello")
    (committed,) = outcome.of(ev.AutoCommitted)
    assert 'return "hello"' in (workspace / "greet.py").read_text()
    undone = await run_tool(client, "undo")
    assert not undone.is_error and committed.sha[:10] in undone.content
    assert 'return "hi"' in (workspace / "greet.py").read_text()
    again = await run_tool(client, "undo")
    assert again.is_error and "not a moot commit" in again.content
    await client.close()


async def test_doctor_sandbox_outline_and_jobs(workspace: Path) -> None:
    client = open_client(options(workspace))
    doctor = await run_tool(client, "doctor")
    assert doctor.content.startswith("moot ") and "anthropic" in doctor.content
    sandbox = await run_tool(client, "sandbox")
    assert "setting: MOOT_SANDBOX=none" in sandbox.content and "host" in sandbox.content
    outline = await run_tool(client, "outline", {"path": "greet.py"})
    assert outline.content.splitlines() == [
        "    1  def greet():",
        "    5  class Door:",
        "    6      def open(self):",
    ]
    hidden = await run_tool(client, "outline", {"path": "../elsewhere.py"})
    assert hidden.is_error
    started = await run_tool(client, "bash", {"command": "sleep 30", "run_in_background": True})
    shell_id = started.display["shell_id"]
    jobs = await run_tool(client, "jobs")
    assert shell_id in jobs.content and "running" in jobs.content and "sleep 30" in jobs.content
    killed = await run_tool(client, "kill_shell", {"shell_id": shell_id})
    assert not killed.is_error
    assert "running" not in (await run_tool(client, "jobs")).content
    await client.close()


async def test_permission_rules_are_listed_with_their_source_and_changed_at_once(
    workspace: Path,
) -> None:
    client = open_client(options(workspace, allowed_tools=["Bash(ls:*)"]))
    report = client.permissions()
    sources = {(r.kind, r.rule): r.source for r in report.rules}
    assert sources[("deny", "Read(./.env)")] == str(workspace / ".moot" / "settings.json")
    assert sources[("allow", "Bash(ls:*)")] == "command line"
    assert report.local_file == str(workspace / ".moot" / "settings.local.json")

    assert "notes.txt" in (await run_tool(client, "grep", {"pattern": "milk"})).content
    added = await run_tool(
        client, "permission_rule", {"action": "add", "kind": "deny", "rule": "Read(notes.txt)"}
    )
    assert not added.is_error and "holds from now on" in added.content
    local = json.loads((workspace / ".moot" / "settings.local.json").read_text())
    assert local["permissions"]["deny"] == ["Read(notes.txt)"]
    # At once: the read is refused, and grep no longer finds the file.
    with pytest.raises(CommandError, match=r"denied by Read\(notes.txt\)"):
        await run_tool(client, "read", {"path": "notes.txt"})
    assert "notes.txt" not in (await run_tool(client, "grep", {"pattern": "milk"})).content
    assert ("deny", "Read(notes.txt)") in {(r.kind, r.rule) for r in client.permissions().rules}

    elsewhere = await run_tool(
        client, "permission_rule", {"action": "remove", "kind": "deny", "rule": "Read(./.env)"}
    )
    assert elsewhere.is_error and "settings.json; remove it there" in elsewhere.content
    bad = await run_tool(
        client, "permission_rule", {"action": "add", "kind": "deny", "rule": "Read("}
    )
    assert bad.is_error and "closing ')'" in bad.content
    removed = await run_tool(
        client, "permission_rule", {"action": "remove", "kind": "deny", "rule": "Read(notes.txt)"}
    )
    assert not removed.is_error
    assert "notes.txt" in (await run_tool(client, "grep", {"pattern": "milk"})).content
    await client.close()


# ---- @path ---------------------------------------------------------------------------------------


async def test_a_prompt_attaches_the_files_it_names_and_a_resume_folds_the_same(
    workspace: Path,
) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(5000)))
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (workspace / "src").mkdir()
    (workspace / "src" / "env-link").symlink_to("../.env")
    client = open_client(options(workspace))
    prompt = (
        "see @notes.txt, @.env, @big.txt @blob.bin @src and @bob (mail me@example.com); "
        "also @src/env-link and @../outside.txt"
    )
    outcome = await drive_turn(client, prompt)
    (started,) = outcome.of(ev.TurnStarted)
    got = {f.path: f for f in started.files}
    assert list(got) == [
        "notes.txt", ".env", "big.txt", "blob.bin", "src", "src/env-link", "../outside.txt"
    ]  # fmt: skip
    # A link to a hidden file is hidden as the file is; outside the workspace is never read.
    assert not got["src/env-link"].text and "Read(./.env)" in got["src/env-link"].note
    assert got["../outside.txt"].note == "outside the workspace"
    assert got["notes.txt"].text == "remember the milk" and not got["notes.txt"].note
    assert not got[".env"].text and "denied by Read(./.env)" in got[".env"].note
    assert got["big.txt"].note == "the first 2,000 of 5,000 lines"
    assert got["big.txt"].text.splitlines()[-1] == "line 1999"
    assert "binary" in got["blob.bin"].note and "directory" in got["src"].note
    conversation = client._runtime.conversation()  # what the model read
    said = conversation[0].content
    assert said.startswith(prompt)
    assert '<file path="notes.txt">\nremember the milk\n</file>' in said
    assert "sk-secret" not in said
    session = client.session_id
    await client.close()
    again = open_client(options(workspace, session_id=session))
    assert again._runtime.conversation()[0].content == said
    await again.close()


# ---- diffs of finished edits ---------------------------------------------------------------------


async def test_a_finished_edit_carries_the_diff_its_approval_showed(workspace: Path) -> None:
    client = open_client(options(workspace, model="edit.yaml"))
    outcome = await drive_turn(client, "say hello", answer=approve)
    asked = {e.tool: e for e in outcome.of(ev.ApprovalRequested)}
    done = {e.tool: e for e in outcome.of(ev.ToolFinished)}
    assert done["edit"].display["diff"] == asked["edit"].preview
    assert '-    return "hi"\n+    return "hello"\n' in done["edit"].display["diff"]
    assert done["write"].display["diff"] == asked["write"].preview
    assert done["write"].display["diff"].startswith("--- /dev/null\n+++ b/new.txt\n")
    assert "diff" not in done["read"].display
    await client.close()


# ---- queries -------------------------------------------------------------------------------------


async def test_context_tells_what_fills_the_context(workspace: Path) -> None:
    client = open_client(options(workspace))
    before = client.context()
    assert before.agent == "moot" and before.model.startswith("scripted:")
    parts = {p.name: p for p in before.parts}
    assert parts["system prompt"].tokens > 20 and parts["tools"].tokens > 500
    assert parts["messages"].tokens == 0 and before.last_input_tokens is None
    await drive_turn(client, "x" * 4000)
    after = {p.name: p for p in client.context().parts}
    assert after["messages"].tokens >= 1000 and after["messages"].detail.startswith("2 messages")
    await client.close()


async def test_models_lists_the_catalog_with_what_each_needs(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    client = open_client(options(workspace))
    models = {m.name: m for m in client.models()}
    assert models[script(workspace, "first.yaml")].ready
    assert models["openai/gpt-5"].ready and models["openai/gpt-5"].context_window
    sonnet = models["anthropic/claude-sonnet-4-5"]
    assert not sonnet.ready and sonnet.note == "no key: set ANTHROPIC_API_KEY"
    names = [m.name for m in client.models()]
    assert names.index("openai/gpt-5") < names.index("anthropic/claude-sonnet-4-5")
    await client.close()


# ---- /trust --------------------------------------------------------------------------------------


async def test_trust_shows_what_waits_and_approves_only_what_it_showed(workspace: Path) -> None:
    from command_recorder import Recorder
    from moot.commands.builtin import builtin_commands

    settings = workspace / ".moot" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(make:*)"]}}))
    client = open_client(options(workspace))
    assert any("asks to turn on: allow Bash(make:*)" in n for n in client.status().notices)
    registry = builtin_commands()

    kept = Recorder(client, picks=["keep"])  # type: ignore[arg-type]
    await registry.run(kept, "/trust")
    assert "allow Bash(make:*) (runs without asking)" in kept.said[0][0]
    assert kept.said[-1][0] == "kept off; /trust asks again"
    assert "Bash(make:*)" not in {r.rule for r in client.permissions().rules}

    approving = Recorder(client, picks=["approve"])  # type: ignore[arg-type]
    shown = await run_tool(client, "trust_settings", {"action": "show"})
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))  # changed meanwhile
    stray = await run_tool(
        client, "trust_settings", {"action": "approve", "files": [["/etc/passwd", "x"]]}
    )
    assert stray.is_error and "nothing of this workspace's waits in /etc/passwd" in stray.content
    await registry.run(approving, "/trust")  # shows, and approves, what is there now
    assert "allow Bash (runs without asking" in approving.said[0][0]
    assert "approved" in approving.said[-1][0]
    await client.close()

    again = open_client(options(workspace))
    assert not any("asks to turn on" in n for n in again.status().notices)
    assert ("allow", "Bash") in {(r.kind, r.rule) for r in again.permissions().rules}
    assert shown.display["held"][0][2] == ["allow Bash(make:*) (runs without asking)"]
    await again.close()


async def test_model_takes_a_key_it_lacks_checks_it_and_saves_it(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, private_moot_home: Path
) -> None:
    """Issue 29, item 4: `/model` said `no key: set ANTHROPIC_API_KEY` with nowhere to paste
    one. Now it asks (never shown), tries the key with one tiny request, and saves it 0600."""
    from command_recorder import Recorder
    from model_server import ModelServer, Reply
    from moot.commands.builtin import builtin_commands
    from wire_builders import anthropic

    for name in ("ANTHROPIC_API_KEY", "MOOT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    registry = builtin_commands()
    keys = private_moot_home / "config" / "keys.json"
    with ModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.reply(
            Reply(401, b'{"type":"error","error":{"type":"authentication_error","message":"no"}}'),
            Reply(body=anthropic("OK")),
        )
        client = open_client(options(workspace))
        refused = Recorder(client, secrets=["sk-ant-wrong"])  # type: ignore[arg-type]
        await registry.run(refused, "/model anthropic/claude-haiku-4-5")
        assert "needs a key for anthropic" in refused.asked_secrets[0]
        assert "anthropic refused the key (HTTP 401)" in refused.said[-1][0]
        assert refused.said[-1][1]  # a warning
        assert client.status().model.startswith("scripted:")
        assert not keys.exists()

        kept = Recorder(client, secrets=[None])  # type: ignore[arg-type]
        await registry.run(kept, "/model anthropic/claude-haiku-4-5")
        assert kept.said[-1][0].startswith("no key given; the model stays scripted:")

        taken = Recorder(client, secrets=["sk-ant-right"])  # type: ignore[arg-type]
        await registry.run(taken, "/model anthropic/claude-haiku-4-5")
        tried = [r.headers.get("x-api-key") for r in server.requests]
        await client.close()
    assert tried == ["sk-ant-wrong", "sk-ant-right"]
    assert json.loads(keys.read_text()) == {"anthropic": "sk-ant-right"}
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    said = " ".join(text for text, _ in taken.said)
    assert "saved the anthropic key" in said and "anthropic took it" in said
    assert "model: anthropic/claude-haiku-4-5" in said
    assert "sk-ant-right" not in said


async def test_the_rules_follow_the_settings_files_without_a_restart(
    workspace: Path, tmp_path: Path
) -> None:
    """Issue 29, item 9: deleting `.moot/settings.local.json` left its rules in force until the
    session was opened again. The session's rules follow the files before each decision."""
    from moot.settings import save_local_rule

    (tmp_path / "ls.yaml").write_text(
        "turns:\n"
        "  - tool_calls: [{name: bash, arguments: {command: 'ls'}}]\n"
        "  - text: listed\n"
        "  - tool_calls: [{name: bash, arguments: {command: 'ls'}}]\n"
        "  - text: listed again\n"
    )
    save_local_rule(workspace, "allow", "Bash(ls:*)")
    client = open_client(options(workspace, model="ls.yaml"))
    first = await drive_turn(client, "list")
    assert not [e for e in first.events if isinstance(e, ev.ApprovalRequested)]
    (workspace / ".moot" / "settings.local.json").unlink()
    asked: list[ev.ApprovalRequested] = []

    def deny(request: ev.ApprovalRequested) -> ops.Op:
        asked.append(request)
        return ops.Deny(tool_call_id=request.tool_call_id, call_id=request.call_id)

    await drive_turn(client, "list again", answer=deny)
    await client.close()
    assert [a.tool for a in asked] == ["bash"]  # the deleted file's rule no longer holds
