"""MCP in a session beyond single tool calls: deferred tools loaded on demand, `/mcp` and prompt
commands, `@server:uri` mentions, and headless runs that refuse a repository's server unless a
flag allows it. Real servers (`tests/mcp_servers.py`) in their own processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from command_recorder import Recorder
from mcp_helpers import call, project_servers, script, server, user_servers, wait_for
from moot.client.assemble import open_session
from moot.client.local import SessionOptions, open_client
from moot.client.rules import session_rules
from moot.client.session import SessionAssembly
from moot.commands.builtin import builtin_commands
from moot.commands.mentions import expand_mentions
from moot.core.agent import Agent
from moot.protocol import events as ev
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.settings import load_settings
from moot.store.memory import MemoryStore
from moot.testing import drive_turn
from moot.testing.drive import deny
from tui_apps import app_for

pytestmark = pytest.mark.timeout(240)


async def test_many_tools_go_out_as_names_and_load_on_demand(
    workspace: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good"), "many": server("many")})
    offered: list[list[str]] = []
    searches: list[str] = []

    def model(request: ModelRequest) -> object:
        offered.append([t.name for t in request.tools])
        step = len(offered)
        if step == 1:
            search = next(t for t in request.tools if t.name == "mcp_tool_search")
            searches.append(search.description)
            return call("mcp_tool_search", query="select:mcp__many__lookup_03")
        if step == 2:
            return call("mcp__many__lookup_03", query="owls")
        return {"text": "done"}

    store = MemoryStore()
    session_id = store.create_session(title="t", workspace=str(workspace)).id
    settings = load_settings(workspace)
    assembly = SessionAssembly(
        settings=settings,
        agent=Agent("moot", model=FunctionProvider(model)),
        rules=session_rules(settings, allow=["mcp__many"]),
    )
    session = open_session(store, session_id, workspace, assembly)
    assert session.mcp is not None
    session.mcp.start()
    for name in ("good", "many"):
        await wait_for(_Statuses(session.mcp), name)

    outcome = await drive_turn(session.runtime, "go")
    cost = {s.name: s.tools for s in session.mcp.statuses()}
    await session.close()

    first, second, _ = offered
    assert "mcp__good__echo" in first  # the small server's tools go out in full
    assert "mcp__many__lookup_03" not in first and "mcp_tool_search" in first
    assert "mcp__many__lookup_59: Look up records of kind 59" in searches[0]
    assert "mcp__many__lookup_03" in second and "mcp__many__lookup_04" not in second
    results = [e for e in outcome.events if isinstance(e, ev.ToolFinished)]
    assert '"query"' in results[0].content  # the schema the search returned
    assert results[1].content == "tool 3: owls"
    assert all(t.deferred for t in cost["many"] if t.name != "mcp__many__lookup_03")
    full = sum(t.schema_bytes for t in cost["many"] if not t.deferred)
    brief = sum(t.schema_bytes for t in cost["many"] if t.deferred)
    assert brief < full * 59 / 3  # a deferred tool's line costs far less than its schema


class _Statuses:
    """`wait_for` needs `mcp_servers()`; a manager calls it `statuses()`."""

    def __init__(self, manager: object) -> None:
        self.manager = manager

    def mcp_servers(self) -> list[object]:
        return self.manager.statuses()  # type: ignore[attr-defined, no-any-return]


async def test_mcp_shows_each_server_and_a_prompt_is_a_command(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    project_servers(workspace, {"repo": server("good")})
    client = open_client(
        SessionOptions(cwd=workspace, model=script(tmp_path / "s.json", {"text": "ok"}))
    )
    client.subscribe().close()
    await wait_for(client, "good")
    context = Recorder(client)
    commands = builtin_commands()

    await commands.run(context, "/mcp")
    listing = context.last
    assert "**good** ready" in listing and "6 tools" in listing
    assert "/mcp__good__review" in listing and "@good:notes://today" in listing
    assert "**repo** needs your approval" in listing and "/mcp approve repo" in listing
    await commands.run(context, "/mcp good")
    assert "`mcp__good__echo` Say the text back." in context.last
    await commands.run(context, "/mcp__good__nope")
    assert "no command /mcp__good__nope" in context.last
    assert [c.name for c in commands.session_commands(context)] == ["mcp__good__review"]

    subscription = client.subscribe()
    await commands.run(context, "/mcp__good__review the parser")
    async for event in subscription:
        if isinstance(event, ev.TurnStarted):
            assert event.prompt == "Please review the parser carefully."
        if isinstance(event, ev.TurnFinished):
            break
    subscription.close()

    await commands.run(context, "/mcp approve repo")
    assert context.last.startswith("approved repo")
    assert (await wait_for(client, "repo")).state == "ready"
    await client.close()


async def test_a_resource_mention_is_read_and_added_to_the_message(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    client = open_client(SessionOptions(cwd=workspace, model=script(tmp_path / "s.json")))
    client.subscribe().close()  # starts it; the mention waits for it to be ready

    text, images = await expand_mentions(
        client, "summarize @good:notes://today, and @good:notes://nope. Mail a@b:c"
    )
    await client.close()
    assert text.startswith("summarize @good:notes://today,")
    assert '<resource server="good" uri="notes://today">\nbuy milk; fix the build\n' in text
    assert "@good:notes://nope could not be read" in text
    assert "a@b:c" in text and 'uri="c"' not in text
    assert images == ()


def headless(workspace: Path, tmp_path: Path, prompt: str, *flags: str) -> list[ev.Event]:
    model = script(tmp_path / "h.json", {"text": "ok"})
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", prompt, "--model", model,
         "--output-format", "events", *flags],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [ev.event_from_json(line) for line in done.stdout.splitlines()]


def test_headless_runs_refuse_a_repository_server_unless_a_flag_allows_it(
    workspace: Path, tmp_path: Path
) -> None:
    started = tmp_path / "started.log"
    project_servers(workspace, {"repo": server("good", env={"MOOT_TEST_MCP_LOG": str(started)})})

    refused = headless(workspace, tmp_path, "summarize @repo:notes://today")
    (turn,) = [e for e in refused if isinstance(e, ev.TurnStarted)]
    assert "@repo:notes://today could not be read" in turn.prompt
    assert "has not been approved" in turn.prompt and "--allow-project-mcp repo" in turn.prompt
    assert not started.exists()

    allowed = headless(
        workspace, tmp_path, "summarize @repo:notes://today", "--allow-project-mcp", "repo"
    )
    (turn,) = [e for e in allowed if isinstance(e, ev.TurnStarted)]
    assert "buy milk; fix the build" in turn.prompt
    assert started.read_text().startswith("started good")


def test_moot_mcp_add_list_get_remove_and_approve(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "moot.cli", "mcp", *args],
            cwd=workspace, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    added = moot("add", "good", "--", sys.executable, str(server("good")["args"][0]), "good")
    assert added.returncode == 0, added.stderr
    local = json.loads((workspace / ".moot" / "settings.local.json").read_text())
    assert local["mcpServers"]["good"]["args"][-1] == "good"
    remote = moot("add", "--scope", "project", "--transport", "http", "-H", "X-Key: ${KEY:-k}",
                  "docs", "https://docs.test/mcp")  # fmt: skip
    assert remote.returncode == 0, remote.stderr
    assert json.loads((workspace / ".mcp.json").read_text())["mcpServers"]["docs"] == {
        "type": "http",
        "url": "https://docs.test/mcp",
        "headers": {"X-Key": "${KEY:-k}"},
    }
    project_servers(
        workspace,
        {**json.loads((workspace / ".mcp.json").read_text())["mcpServers"], "repo": server("good")},
    )

    listed = moot("list")
    assert listed.returncode == 0, listed.stderr
    assert "good: " in listed.stdout and "ready: 6 tools, 1 prompts, 1 resources" in listed.stdout
    assert "repo: " in listed.stdout and "moot mcp approve repo" in listed.stdout

    got = moot("get", "good")
    assert "prompt /mcp__good__review topic" in got.stdout
    assert "resource @good:notes://today" in got.stdout

    assert moot("approve", "repo").returncode == 0
    assert "ready" in moot("get", "repo").stdout
    assert moot("remove", "good").returncode == 0
    assert (
        "good"
        not in json.loads((workspace / ".moot" / "settings.local.json").read_text())["mcpServers"]
    )
    missing = moot("remove", "good")
    assert missing.returncode == 1 and "no MCP server 'good'" in missing.stderr
    bad = moot("add", "a.b", "--", "x")
    assert bad.returncode == 2 and "letters, digits" in bad.stderr


async def test_a_script_a_server_runs_is_protected_like_a_hook_script(
    workspace: Path, tmp_path: Path
) -> None:
    """It runs on the host: even in acceptEdits, a file tool's write of it asks the person."""
    (workspace / "tools").mkdir()
    (workspace / "tools" / "mcp.py").write_text("print('server')\n")
    project_servers(workspace, {"repo": {"command": "python3", "args": ["tools/mcp.py"]}})
    model = script(
        tmp_path / "s.json",
        call("write", path="tools/mcp.py", content="import os; os.system('evil')\n"),
        call("write", path="other.py", content="print('fine')\n"),
        {"text": "ok"},
    )
    client = open_client(SessionOptions(cwd=workspace, model=model, permission_mode="acceptEdits"))
    outcome = await drive_turn(client, "go", answer=lambda e: deny(e, "no"))
    await client.close()
    (asked,) = outcome.of(ev.ApprovalRequested)
    assert asked.arguments["path"] == "tools/mcp.py" and "protected" in asked.reason
    assert (workspace / "tools" / "mcp.py").read_text() == "print('server')\n"
    assert (workspace / "other.py").read_text() == "print('fine')\n"


async def test_the_repl_sends_a_mentioned_resource_with_the_message(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    """The plain REPL (as the app, headless and ACP) reads `@server:uri` before it submits."""
    from repl_harness import running_repl

    user_servers(private_moot_home, {"good": server("good")})
    model = script(tmp_path / "s.json", {"text": "noted the list"})
    client = open_client(SessionOptions(cwd=workspace, model=model))
    async with running_repl(client) as repl:  # type: ignore[arg-type]
        await repl.prompt_ready()
        repl.type("summarize @good:notes://today\r")
        await repl.printed("noted the list", timeout=60)
        events = list(client.query.events(client.session_id))
    (started,) = [e for e in events if e.kind == "turn_started"]
    assert started.prompt.startswith("summarize @good:notes://today")  # type: ignore[attr-defined]
    assert "buy milk; fix the build" in started.prompt  # type: ignore[attr-defined]


async def test_the_app_sends_a_mentioned_resource_with_the_message(
    workspace: Path, private_moot_home: Path, tmp_path: Path
) -> None:
    import asyncio

    user_servers(private_moot_home, {"good": server("good")})
    model = script(tmp_path / "s.json", {"text": "noted the list"})
    client = open_client(SessionOptions(cwd=workspace, model=model))
    events = client.subscribe()

    async def started() -> ev.TurnStarted:
        """The turn's start, once it has finished (the app shows it all before it closes)."""
        seen = [e async for e in _until_finished(events)]
        (turn,) = [e for e in seen if isinstance(e, ev.TurnStarted)]
        return turn

    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await pilot.press(*"summarize @good:notes://today", "enter")
        turn = await asyncio.wait_for(started(), 60)
        await pilot.pause()
    events.close()
    await client.close()
    assert turn.prompt.startswith("summarize @good:notes://today")
    assert "buy milk; fix the build" in turn.prompt


async def _until_finished(events: Any) -> Any:
    async for event in events:
        yield event
        if isinstance(event, ev.TurnFinished):
            return
