"""`moot mcp serve`, driven by the SDK's own client over stdio: moot's workspace tools under its
permissions (what would ask is refused, or asked through elicitation in both protocol eras),
its sandbox, and `moot_task` running a whole agent."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult

pytestmark = pytest.mark.timeout(180)
OUTSIDE = Path("/usr/moot-escape")
"""Where a sandboxed command must not be able to write."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hello world\n")
    (root / "secret.txt").write_text("the key is 42\n")
    return root


@asynccontextmanager
async def served(
    workspace: Path, *flags: str, answers: list[str] | None = None, mode: str = "auto"
) -> AsyncIterator[tuple[Client, list[str]]]:
    """A `moot mcp serve` process and the SDK's client connected to it; `answers` are what the
    client's person says to each elicitation (None: the client cannot be asked)."""
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        assert answers, "asked more than the test expected"
        answer = answers.pop(0)
        if answer == "decline":
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"answer": answer})

    keep = ("MOOT_HOME", "MOOT_SANDBOX", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "moot.cli", "mcp", "serve", *flags],
        cwd=str(workspace),
        env=env,
    )
    callback = elicit if answers is not None else None
    async with Client(params, mode=mode, elicitation_callback=callback) as client:
        yield client, asked


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


async def test_the_workspace_tools_are_listed_and_reads_run(workspace: Path) -> None:
    async with served(workspace) as (client, _):
        names = {tool.name for tool in (await client.list_tools()).tools}
        read = await client.call_tool("read", {"path": "notes.txt"})
        grep = await client.call_tool("grep", {"pattern": "hello"})
        outside = await client.call_tool("read", {"path": "../elsewhere.txt"})
    assert {"read", "grep", "glob", "edit", "bash", "repo_map", "git_status", "moot_task"} <= names
    assert {"todo", "web_fetch", "exit_plan_mode"}.isdisjoint(names)
    assert "hello world" in text(read) and not read.is_error
    assert "notes.txt" in text(grep)
    assert outside.is_error  # the path policy holds for another agent too


async def test_what_would_ask_is_refused_when_the_client_cannot_be_asked(workspace: Path) -> None:
    async with served(workspace, "--disallowedTools", "Read(./secret.txt)") as (client, _):
        await client.call_tool("read", {"path": "notes.txt"})
        edit = await client.call_tool("edit", {"path": "notes.txt", "old": "world", "new": "you"})
        secret = await client.call_tool("read", {"path": "secret.txt"})
    assert edit.is_error and "cannot ask the person" in text(edit)
    assert "--allowedTools" in text(edit) and "Edit(./notes.txt)" in text(edit)
    assert (workspace / "notes.txt").read_text() == "hello world\n"
    assert secret.is_error and "denied by Read(./secret.txt)" in text(secret)

    async with served(workspace, "--permission-mode", "acceptEdits") as (client, _):
        await client.call_tool("read", {"path": "notes.txt"})
        edit = await client.call_tool("edit", {"path": "notes.txt", "old": "world", "new": "you"})
    assert not edit.is_error
    assert (workspace / "notes.txt").read_text() == "hello you\n"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_that_can_be_asked_is_asked_in_either_protocol_era(
    workspace: Path, mode: str
) -> None:
    answers = ["deny", "allow once", "allow for this session"]
    async with served(workspace, answers=answers, mode=mode) as (client, asked):
        era = client.protocol_version
        await client.call_tool("read", {"path": "notes.txt"})
        denied = await client.call_tool("edit", {"path": "notes.txt", "old": "world", "new": "a"})
        allowed = await client.call_tool("edit", {"path": "notes.txt", "old": "world", "new": "b"})
        await client.call_tool("write", {"path": "new.txt", "content": "one\n"})
        again = await client.call_tool("write", {"path": "new.txt", "content": "two\n"})
    assert era == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert denied.is_error and "the person denied it" in text(denied)
    assert not allowed.is_error and (workspace / "notes.txt").read_text() == "hello b\n"
    assert len(asked) == 3  # the second write was allowed for the session
    assert "moot asks before edit" in asked[0] and "+hello a" in asked[0]
    assert not again.is_error and (workspace / "new.txt").read_text() == "two\n"


async def test_shell_commands_run_in_moots_sandbox(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    if shutil.which("bwrap") is None:
        if os.environ.get("CI"):
            pytest.fail("bubblewrap is needed for this test in CI")
        pytest.skip("bubblewrap is not installed")
    monkeypatch.setenv("MOOT_SANDBOX", "bubblewrap")
    flags = ("--allowedTools", "Bash(echo:*),Bash(touch:*)")
    async with served(workspace, *flags) as (client, _):
        echo = await client.call_tool("bash", {"command": "echo hi from the sandbox"})
        escape = await client.call_tool("bash", {"command": "touch /usr/moot-escape"})
        inside = await client.call_tool("bash", {"command": "touch made-here"})
    assert "hi from the sandbox" in text(echo) and not echo.is_error
    assert escape.is_error and not OUTSIDE.exists()  # noqa: ASYNC240 - a test
    assert not inside.is_error and (workspace / "made-here").exists()


async def test_moot_task_runs_a_whole_agent_and_can_be_continued(
    workspace: Path, tmp_path: Path
) -> None:
    model = tmp_path / "agent.json"
    model.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
                    {"text": "The notes say hello world."},
                    {"text": "Still hello world."},
                ]
            }
        )
    )
    async with served(workspace, "--model", f"scripted:{model}") as (client, _):
        first = await client.call_tool("moot_task", {"task": "what do the notes say?"})
        session = text(first).rpartition("[moot session ")[2].split(":")[0]
        second = await client.call_tool("moot_task", {"task": "and now?", "session_id": session})
        bad = await client.call_tool("moot_task", {"task": "x", "session_id": "ses_nope"})
    assert text(first).startswith("The notes say hello world.")
    assert ": completed, completed]" in text(first) and not first.is_error
    assert text(second).startswith("Still hello world.") and f"session {session}" in text(second)
    assert bad.is_error and "no session 'ses_nope'" in text(bad)
