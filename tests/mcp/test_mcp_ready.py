"""A run that cannot be watched (`moot -p`) waits for its MCP servers before its first model
request: on a fresh machine (no cached tool lists) its first run sees their tools and prompts;
a server not up in time is named with what it wrote to stderr, and the run goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcp_helpers import call, script, server, user_servers
from mcp_reference import everything, filesystem, require
from moot.protocol import events as ev

pytestmark = pytest.mark.timeout(240)


def headless(
    workspace: Path, model: str, prompt: str, *flags: str, **env: str
) -> tuple[list[ev.Event], str]:
    environ = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", prompt, "--model", model,
         "--output-format", "events", "--allowedTools", "mcp__good", *flags],
        cwd=workspace, env={**environ, **env}, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [ev.event_from_json(line) for line in done.stdout.splitlines()], done.stderr


def results(events: list[ev.Event]) -> list[str]:
    return [e.content for e in events if isinstance(e, ev.ToolFinished)]


def test_the_first_headless_run_on_a_fresh_home_sees_the_servers_tools(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    model = script(
        tmp_path / "m.json", call("mcp__good__echo", text="owls at dusk"), {"text": "done"}
    )

    events, _ = headless(workspace, model, "say it back")

    assert results(events) == ["owls at dusk"]


def test_a_server_that_hangs_at_start_is_named_with_its_stderr_and_the_run_goes_on(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    stuck = server("stuck", startupTimeout=2)
    user_servers(private_moot_home, {"stuck": stuck, "good": server("good")})
    model = script(tmp_path / "m.json", call("mcp__good__add", a=2, b=3), {"text": "done"})

    events, stderr = headless(workspace, model, "add")

    assert results(events) == ["5"]  # the server that came up is there
    assert "MCP server stuck failed to start: did not finish starting" in stderr, stderr
    assert "within 2 s" in stderr and "TimeoutError" not in stderr
    assert "stuck: waiting for the licence server at 10.9.8.7" in stderr


@pytest.mark.parametrize("bound", ["setting", "MCP_TIMEOUT"])
def test_the_wait_is_bounded_and_a_server_still_starting_is_named_with_its_stderr(
    workspace: Path, tmp_path: Path, private_moot_home: Path, bound: str
) -> None:
    if bound == "setting":
        user_servers(private_moot_home, {"stuck": server("stuck")}, mcpStartupWait=8)
        env = {}
    else:
        user_servers(private_moot_home, {"stuck": server("stuck")})
        env = {"MCP_TIMEOUT": "8000"}
    model = script(tmp_path / "m.json", {"text": "answered anyway"})

    began = time.monotonic()
    events, stderr = headless(workspace, model, "hello", **env)

    assert [e.text for e in events if isinstance(e, ev.TextDelta)] == ["answered anyway"]
    assert time.monotonic() - began < 25  # not the default 30 s
    assert "MCP server stuck" in stderr and "8 s" in stderr, stderr
    assert "stuck: waiting for the licence server at 10.9.8.7" in stderr


def test_an_mcp_prompt_is_a_headless_runs_message(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    model = script(tmp_path / "m.json", {"text": "reviewed"})

    events, _ = headless(workspace, model, "/mcp__good__review the parser")

    (turn,) = [e for e in events if isinstance(e, ev.TurnStarted)]
    assert turn.prompt == "Please review the parser carefully."


def test_the_reference_servers_tools_and_prompts_are_there_in_the_first_headless_run(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    modules = require()
    (workspace / "notes.txt").write_text("the owl flies at dusk\n")
    servers = {"fs": filesystem(modules, workspace), "everything": everything(modules)}
    user_servers(private_moot_home, servers)
    notes = str(workspace / "notes.txt")
    model = script(
        tmp_path / "m.json",
        {"tool_calls": [
            {"name": "mcp__fs__read_text_file", "arguments": {"path": notes}},
            {"name": "mcp__everything__echo", "arguments": {"message": "hello"}},
        ]},
        {"text": "done"},
    )  # fmt: skip
    allow = ("--allowedTools", "mcp__fs,mcp__everything")

    events, _ = headless(workspace, model, "read it", *allow)
    assert results(events) == ["the owl flies at dusk\n", "Echo: hello"]

    model = script(tmp_path / "p.json", {"text": "ok"})
    events, _ = headless(workspace, model, "/mcp__everything__simple-prompt")
    (turn,) = [e for e in events if isinstance(e, ev.TurnStarted)]
    assert turn.prompt == "This is a simple prompt without arguments."


def test_the_servers_are_told_the_workspace_as_their_root(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    """server-filesystem given no directory works in the client's roots (the workspace, then
    each --add-dir); server-everything offers `get-roots-list` only to a client that has roots."""
    modules = require()
    (workspace / "notes.txt").write_text("rooted\n")
    servers = {"fs": filesystem(modules), "everything": everything(modules)}
    user_servers(private_moot_home, servers)
    notes = str(workspace / "notes.txt")
    model = script(
        tmp_path / "m.json",
        # server-filesystem asks for the roots once it is initialised and takes them as its
        # answer comes back, which may be after its tools are listed: its read comes a model
        # turn later, as a model's would, and once more a second later (a loaded machine ran
        # the first before the server had the answer: "path outside allowed directories").
        {"tool_calls": [{"name": "mcp__everything__get-roots-list", "arguments": {}}]},
        {"tool_calls": [{"name": "mcp__fs__read_text_file", "arguments": {"path": notes}}]},
        {"delay": 1.0, "tool_calls": [
            {"name": "mcp__fs__read_text_file", "arguments": {"path": notes}}
        ]},
        {"text": "done"},
    )  # fmt: skip

    other = tmp_path / "other"
    other.mkdir()
    allow = ("--allowedTools", "mcp__fs,mcp__everything")
    events, _ = headless(workspace, model, "go", *allow, "--add-dir", str(other))

    roots, first, read = results(events)
    assert read == "rooted\n"
    assert first == read or first.startswith("Access denied - path outside allowed directories")
    assert workspace.as_uri() in roots and other.as_uri() in roots  # and the --add-dir


def test_a_servers_progress_shows_on_the_tools_block(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"good": server("good")})
    model = script(tmp_path / "m.json", call("mcp__good__steps", count=3), {"text": "done"})

    events, _ = headless(workspace, model, "count")

    (started,) = [e for e in events if isinstance(e, ev.ToolStarted)]
    shown = [e for e in events if isinstance(e, ev.ToolOutput)]
    assert [e.text for e in shown] == ["[1/3] step 1\n", "[2/3] step 2\n", "[3/3] step 3\n"]
    assert {e.tool_call_id for e in shown} == {started.tool_call_id}
    assert results(events) == ["counted"]


def test_an_mcp_prompt_is_a_stream_json_turn(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    """`--input-format stream-json`: a `user` message `/mcp__server__prompt args` is the
    server's prompt (waited for, as in `-p`); an unknown one is an error result, and the next
    message still runs."""
    from moot.store.sqlite import SQLiteStore

    user_servers(private_moot_home, {"good": server("good")})
    model = script(tmp_path / "m.json", {"text": "reviewed"}, {"text": "hello back"})
    lines = [
        {"type": "user", "message": {"role": "user", "content": text}}
        for text in ("/mcp__good__review the parser", "/mcp__good__nope", "hello")
    ]
    environ = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "--input-format", "stream-json",
         "--output-format", "stream-json", "--model", model],
        input="".join(json.dumps(line) + "\n" for line in lines),
        cwd=workspace, env=environ, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    results = [m for m in out if m["type"] == "result"]
    assert [r["is_error"] for r in results] == [False, True, False], results
    assert [results[0]["result"], results[2]["result"]] == ["reviewed", "hello back"]
    assert "no MCP prompt /mcp__good__nope" in json.dumps(results[1])
    db = private_moot_home / "data" / "sessions.db"
    with SQLiteStore(db) as store:
        turns = store.events(results[0]["session_id"], kinds=("turn_started",))
    assert [getattr(t, "prompt", "") for t in turns] == [
        "Please review the parser carefully.",
        "hello",
    ]
