"""`moot acp`, driven by the ACP SDK's own client through whole sessions: initialize, a prompt
with streamed chunks, tool calls with kinds, locations and diffs, a permission request answered,
a mode switch, a plan, a cancel, slash commands, and loading an earlier session from the log.
The agent runs as a real process; the model is scripted."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities

from acp_client import Editor, agent, call, scripted

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hello world\n")
    return root


async def test_a_whole_session_prompt_tools_permission_mode_plan_and_load(
    workspace: Path, tmp_path: Path
) -> None:
    model = scripted(
        tmp_path / "m.json",
        {"thinking": "look first", "text": "Reading.", **call("read", path="notes.txt")},
        call("todo", items=[{"text": "fix greeting", "status": "in_progress"}]),
        call("edit", path="notes.txt", old="world", new="editor"),
        {"text": "Done editing."},
        call("edit", path="notes.txt", old="editor", new="again"),
        {"text": "Second turn done."},
    )
    editor = Editor()
    async with agent(workspace, editor, model) as conn:
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        assert init.agent_capabilities.load_session
        assert init.agent_capabilities.prompt_capabilities.embedded_context
        assert init.agent_capabilities.mcp_capabilities.http
        assert init.agent_info.name == "moot"

        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        assert new.modes.current_mode_id == "default"
        assert [m.id for m in new.modes.available_modes] == ["default", "acceptEdits", "plan"]

        done = await conn.prompt(session_id=new.session_id, prompt=[text_block("fix it")])
        assert done.stop_reason == "end_turn"
        assert editor.said() == "Reading.Done editing."
        assert editor.said("agent_thought_chunk") == "look first"
        calls = editor.of("tool_call")
        assert [(c.title, c.kind) for c in calls] == [
            ("Read notes.txt", "read"),
            ("todo", "think"),
            ("Edit notes.txt", "edit"),
        ]
        assert calls[0].locations[0].path == str(workspace / "notes.txt")
        diff = calls[2].content[0]
        assert (diff.type, diff.old_text, diff.new_text) == ("diff", "world", "editor")
        ((asked, options),) = editor.asked  # only the edit asked
        assert asked.kind == "edit" and asked.tool_call_id == calls[2].tool_call_id
        assert [o.option_id for o in options] == ["once", "session", "always", "reject"]
        finished = [u for u in editor.of("tool_call_update") if u.status == "completed"]
        assert len(finished) == 3
        (plan,) = editor.of("plan")
        assert [(e.content, e.status) for e in plan.entries] == [("fix greeting", "in_progress")]
        assert (workspace / "notes.txt").read_text() == "hello editor\n"
        commands = {
            c.name for u in editor.of("available_commands_update") for c in u.available_commands
        }
        assert {"mode", "plan", "status", "mcp"} <= commands
        assert not {"theme", "panes"} & commands  # the editor has its own

        await conn.set_session_mode(session_id=new.session_id, mode_id="acceptEdits")
        second = await conn.prompt(session_id=new.session_id, prompt=[text_block("again")])
        assert second.stop_reason == "end_turn"
        assert len(editor.asked) == 1  # acceptEdits: the second edit ran without asking
        assert editor.of("current_mode_update")[-1].current_mode_id == "acceptEdits"
        assert (workspace / "notes.txt").read_text() == "hello again\n"

    reloaded = Editor()
    async with agent(workspace, reloaded, model) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        loaded = await conn.load_session(
            cwd=str(workspace), session_id=new.session_id, mcp_servers=[]
        )
        assert loaded.modes.current_mode_id == "acceptEdits"
        people = [u.content.text for u in reloaded.of("user_message_chunk")]
        assert people == ["fix it", "again"]
        assert reloaded.said() == "Reading.Done editing.Second turn done."
        assert len(reloaded.of("tool_call")) == 4
        listed = await conn.list_sessions(cwd=str(workspace))
        assert new.session_id in [s.session_id for s in listed.sessions]


async def test_a_rejected_permission_and_a_cancel(workspace: Path, tmp_path: Path) -> None:
    model = scripted(
        tmp_path / "m.json",
        call("edit", path="notes.txt", old="world", new="no"),
        {"text": "Understood."},
        call("edit", path="notes.txt", old="world", new="never"),
        {"text": "not reached", "delay": 30},
    )
    editor = Editor(choose=lambda options: "reject")
    async with agent(workspace, editor, model) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        rejected = await conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
        assert rejected.stop_reason == "end_turn" and editor.said() == "Understood."
        failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
        assert (
            len(failed) == 1 and "rejected this in the editor" in failed[0].content[-1].content.text
        )

        editor.hold = asyncio.Event()  # the next question stays open: the person cancels
        editor.asking.clear()
        prompt = asyncio.create_task(
            conn.prompt(session_id=new.session_id, prompt=[text_block("edit again")])
        )
        await asyncio.wait_for(editor.asking.wait(), 30)
        await conn.cancel(session_id=new.session_id)
        editor.choose = lambda options: None
        editor.hold.set()
        cancelled = await asyncio.wait_for(prompt, 30)
        assert cancelled.stop_reason == "cancelled"
    assert (workspace / "notes.txt").read_text() == "hello world\n"


async def test_reads_show_the_editors_unsaved_buffer_and_commands_answer_in_the_chat(
    workspace: Path, tmp_path: Path
) -> None:
    model = scripted(
        tmp_path / "m.json", call("read", path="notes.txt"), {"text": "ok"}, {"text": "Hi, Bob."}
    )
    (workspace / ".moot/commands").mkdir(parents=True)
    (workspace / ".moot/commands/greet.md").write_text("Greet $ARGUMENTS warmly.\n")
    editor = Editor()
    editor.buffers[str(workspace / "notes.txt")] = "hello unsaved\n"
    async with agent(workspace, editor, model) as conn:
        capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True))
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("read it")])
        (read,) = [u for u in editor.of("tool_call_update") if u.status == "completed"]
        shown = read.content[-1].content.text
        assert "hello unsaved" in shown and "the editor's unsaved text" in shown
        assert editor.reads == [str(workspace / "notes.txt")]

        status = await conn.prompt(session_id=new.session_id, prompt=[text_block("/status")])
        assert status.stop_reason == "end_turn"
        assert f"session  {new.session_id}" in editor.said()
        await conn.prompt(session_id=new.session_id, prompt=[text_block("/mode plan")])
        assert editor.of("current_mode_update")[-1].current_mode_id == "plan"
        await conn.prompt(session_id=new.session_id, prompt=[text_block("/nosuch")])
        assert "no command /nosuch" in editor.said()

        commands = {
            c.name for u in editor.of("available_commands_update") for c in u.available_commands
        }
        assert {"greet", "code-review", "init", "skills", "memory"} <= commands
        greeted = await conn.prompt(session_id=new.session_id, prompt=[text_block("/greet Bob")])
        assert greeted.stop_reason == "end_turn"
        assert editor.said().endswith("Hi, Bob.")


async def test_the_editors_mcp_servers_join_the_session(workspace: Path, tmp_path: Path) -> None:
    from acp.schema import McpServerStdio

    servers = Path(__file__).parents[1] / "mcp_servers.py"
    model = scripted(
        tmp_path / "m.json", call("mcp__editor__echo", text="from the editor"), {"text": "ok"}
    )
    editor = Editor()
    async with agent(workspace, editor, model, "--allowedTools", "mcp__editor") as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        stdio = McpServerStdio(
            name="editor", command=sys.executable, args=[str(servers), "good"], env=[]
        )
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[stdio])
        # The mention waits for the server, so its tools are there for the first model call.
        await conn.prompt(
            session_id=new.session_id, prompt=[text_block("see @editor:notes://today")]
        )
    (echo,) = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert echo.content[-1].content.text == "from the editor"
    (call_start,) = editor.of("tool_call")
    assert (call_start.title, call_start.kind) == ("mcp__editor__echo", "other")
    commands = {
        c.name for u in editor.of("available_commands_update") for c in u.available_commands
    }
    assert "mcp__editor__review" in commands  # the server's prompt, advertised once it is up


async def test_shell_commands_run_in_the_editors_terminal_only_when_the_person_chooses_it(
    workspace: Path, tmp_path: Path
) -> None:
    model = scripted(
        tmp_path / "m.json",
        call("bash", command="echo in the sandbox"),
        {"text": "one"},
        call("bash", command="echo in the terminal; pwd"),
        {"text": "two"},
    )
    editor = Editor()
    async with agent(workspace, editor, model, "--allowedTools", "Bash(echo:*),Bash(pwd)") as conn:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(terminal=True)
        )
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        (option,) = new.config_options
        assert (option.id, option.current_value) == ("shell", "sandbox")
        await conn.prompt(session_id=new.session_id, prompt=[text_block("first")])
        assert editor.terminals == []  # moot's own sandbox (here: MOOT_SANDBOX=none)

        changed = await conn.set_config_option(
            config_id="shell", session_id=new.session_id, value="terminal"
        )
        assert changed.config_options[0].current_value == "terminal"
        await conn.prompt(session_id=new.session_id, prompt=[text_block("second")])
    assert editor.terminals == [["/bin/sh", "-c", "echo in the terminal; pwd"]]
    assert editor.released == ["term-1"]
    done = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert "in the terminal" in done[-1].content[-1].content.text
    assert str(workspace) in done[-1].content[-1].content.text
    shown = [
        c.terminal_id
        for u in editor.of("tool_call_update")
        for c in (u.content or [])
        if getattr(c, "type", "") == "terminal"
    ]
    assert shown == ["term-1"]


async def test_a_prompt_to_a_session_left_mid_turn_finishes_that_turn_first(
    workspace: Path, tmp_path: Path
) -> None:
    """A session whose last turn moot ended in the middle of (an older moot even left a callee
    open in it): the editor's next prompt finishes that turn, as `moot --resume` does, then
    runs. Fails on the old code: the session refused the prompt's turn (`op_refused`), and the
    prompt waited for a `turn_finished` that never came."""
    from moot.store.sqlite import SQLiteStore
    from old_logs import OldLog, callee_left_open_after_its_caller_went_on

    model = scripted(
        tmp_path / "m.json", {"text": "played"}, {"text": "Finished that."}, {"text": "And this."}
    )
    db = Path(os.environ["MOOT_HOME"]) / "data" / "sessions.db"
    with SQLiteStore(db) as store:
        session_id = store.create_session(title="hi", workspace=str(workspace)).id
        callee_left_open_after_its_caller_went_on(OldLog(store, session_id, f"scripted:{model}"))
    editor = Editor()
    async with agent(workspace, editor, model) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        done = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("and now?")]), 60
        )
        assert done.stop_reason == "end_turn"
        assert editor.said().endswith("Finished that.And this.")
    with SQLiteStore(db) as store:
        turns = store.events(session_id, kinds=("turn_started", "turn_finished"))
    assert [(e.kind, getattr(e, "prompt", "")) for e in turns] == [
        ("turn_started", "hi"),
        ("turn_finished", ""),
        ("turn_started", "and now?"),
        ("turn_finished", ""),
    ]


async def test_the_first_prompt_waits_for_the_editors_mcp_servers(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    """A fresh machine (no cached tool lists): the first prompt's request carries the
    server's tools, and a server's prompt works as a first prompt."""
    from acp.schema import McpServerStdio

    servers = Path(__file__).parents[1] / "mcp_servers.py"
    model = scripted(
        tmp_path / "m.json",
        call("mcp__editor__echo", text="from the editor"),
        {"text": "ok"},
    )
    editor = Editor()
    async with agent(workspace, editor, model, "--allowedTools", "mcp__editor") as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        stdio = McpServerStdio(
            name="editor", command=sys.executable, args=[str(servers), "good"], env=[]
        )
        first = await conn.new_session(cwd=str(workspace), mcp_servers=[stdio])
        await conn.prompt(session_id=first.session_id, prompt=[text_block("say it back")])
        (echo,) = [u for u in editor.of("tool_call_update") if u.status == "completed"]
        assert echo.content[-1].content.text == "from the editor"

        editor.updates.clear()  # a new session plays the script from its start
        second = await conn.new_session(cwd=str(workspace), mcp_servers=[stdio])
        ended = await conn.prompt(
            session_id=second.session_id, prompt=[text_block("/mcp__editor__review owls")]
        )
    assert ended.stop_reason == "end_turn"
    assert editor.said() == "ok"  # a turn ran (an unknown command would say so instead)


async def test_a_cancel_ends_every_pending_tool_call_and_commands_are_sent_when_they_change(
    workspace: Path, tmp_path: Path
) -> None:
    model = scripted(
        tmp_path / "m.json",
        {"text": "hi"},
        {"tool_calls": [
            {"name": "edit", "arguments": {"path": "notes.txt", "old": "world", "new": "a"}},
            {"name": "write", "arguments": {"path": "other.txt", "content": "b"}},
        ]},
        {"text": "not reached", "delay": 30},
    )  # fmt: skip
    editor = Editor()
    async with agent(workspace, editor, model) as conn:
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("hello")])
        editor.hold = asyncio.Event()  # the first question stays open: the person cancels
        editor.asking.clear()
        prompt = asyncio.create_task(
            conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
        )
        await asyncio.wait_for(editor.asking.wait(), 30)
        await conn.cancel(session_id=new.session_id)
        editor.choose = lambda options: None
        editor.hold.set()
        cancelled = await asyncio.wait_for(prompt, 30)

    assert cancelled.stop_reason == "cancelled"
    announced = {u.tool_call_id for u in editor.of("tool_call")}
    final = {
        u.tool_call_id for u in editor.of("tool_call_update") if u.status in ("completed", "failed")
    }
    assert len(announced) == 2 and announced <= final
    # The commands did not change between the prompts: announced once, when the session opened.
    assert len(editor.of("available_commands_update")) == 1


@pytest.mark.parametrize("stdin", ["/dev/null", "a file"])
def test_moot_acp_on_a_file_says_so_and_ends(workspace: Path, stdin: str) -> None:
    """The event loop reads only pipes, sockets and terminals: from `/dev/null` the agent hung
    for good (an error in a callback, nothing read), from a file it ended in a traceback."""
    path = Path(stdin) if stdin.startswith("/") else workspace / "requests.jsonl"
    if not stdin.startswith("/"):
        path.write_text('{"jsonrpc": "2.0", "id": 1, "method": "initialize"}\n')
    env = {**os.environ, "MOOT_HOME": str(workspace / ".home")}
    with path.open("rb") as source:
        ended = subprocess.run(
            [sys.executable, "-m", "moot.cli", "acp"],
            cwd=workspace,
            env=env,
            stdin=source,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert ended.returncode == 2
    assert "standard input is a file, not a pipe" in ended.stderr
