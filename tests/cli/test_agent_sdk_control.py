"""What the real Claude Agent SDK (Python) asks of moot beyond a turn: control requests moot
answers from its own capabilities (`get_context_usage`: moot's context report; `mcp_reconnect`:
a restart of one of the session's MCP servers), and the usage on its messages."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeSDKClient,
    ResultMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    UserMessage,
    query,
)

from agent_sdk_options import collect, sdk_options

MCP_SERVERS = Path(__file__).parents[1] / "mcp_servers.py"


async def test_the_context_usage_is_moots_context_report(tmp_path: Path) -> None:
    options = sdk_options(tmp_path, [{"text": "first"}])
    async with ClaudeSDKClient(options) as client:
        await client.query("one")
        await collect(client.receive_response())
        usage = await client.get_context_usage()

    names = [c["name"] for c in usage["categories"]]
    assert "system prompt" in names and "messages" in names
    assert usage["totalTokens"] == sum(c["tokens"] for c in usage["categories"]) > 0
    assert usage["model"].startswith("scripted:")
    assert usage["isAutoCompactEnabled"] is True


async def test_an_mcp_server_is_reconnected_and_an_unknown_one_refused(tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    server = {
        "command": sys.executable,
        "args": [str(MCP_SERVERS), "good"],
        "env": {"MOOT_TEST_MCP_LOG": str(log)},
    }
    options = sdk_options(tmp_path, [{"text": "first"}], mcp_servers={"tools": server})
    async with ClaudeSDKClient(options) as client:
        await client.query("one")
        await collect(client.receive_response())
        await _wait_for(lambda: _starts(log) == 1)
        await client.reconnect_mcp_server("tools")
        await _wait_for(lambda: _starts(log) == 2)
        with pytest.raises(Exception, match="nowhere"):
            await client.reconnect_mcp_server("nowhere")

    assert _starts(log) == 2


def _starts(log: Path) -> int:
    text = log.read_text() if log.exists() else ""
    return sum(line.startswith("started good") for line in text.splitlines())


async def _wait_for(done: Callable[[], bool], seconds: float = 20) -> None:
    """Bounded polling of the MCP server, another process."""
    end = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.05)


async def test_assistant_messages_carry_usage_and_the_result_model_usage(tmp_path: Path) -> None:
    usage = {"input_tokens": 120, "output_tokens": 7, "cache_read_tokens": 100}
    turns = [
        {"tool_calls": [{"name": "ls", "arguments": {}}], "usage": usage, "cost_usd": 0.25},
        {"text": "done", "usage": {"input_tokens": 150, "output_tokens": 3}, "cost_usd": 0.5},
    ]

    messages = await collect(query(prompt="look", options=sdk_options(tmp_path, turns)))

    said = [m.usage for m in messages if isinstance(m, AssistantMessage)]
    assert said == [
        {"input_tokens": 120, "output_tokens": 7, "cache_read_input_tokens": 100,
         "cache_creation_input_tokens": 0},
        {"input_tokens": 150, "output_tokens": 3, "cache_read_input_tokens": 0,
         "cache_creation_input_tokens": 0},
    ]  # fmt: skip
    end = messages[-1]
    assert isinstance(end, ResultMessage) and end.total_cost_usd == 0.75
    (model,) = end.model_usage.values()
    assert (model["inputTokens"], model["outputTokens"], model["cacheReadInputTokens"]) == (
        270,
        10,
        100,
    )
    assert model["costUSD"] == 0.75


async def test_rewind_files_puts_back_what_the_turns_since_a_user_message_changed(
    tmp_path: Path,
) -> None:
    def write(path: str, content: str) -> dict[str, Any]:
        return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}

    turns = [write("a.txt", "one"), {"text": "first"}, write("a.txt", "two"),
             write("b.txt", "new"), {"text": "second"}]  # fmt: skip
    options = sdk_options(
        tmp_path,
        turns,
        permission_mode="acceptEdits",
        enable_file_checkpointing=True,
        extra_args={"replay-user-messages": None},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("one")
        await collect(client.receive_response())
        await client.query("two")
        second = await collect(client.receive_response())
        assert (tmp_path / "a.txt").read_text() == "two" and (tmp_path / "b.txt").exists()
        (echo,) = [m for m in second if isinstance(m, UserMessage) and m.content == "two"]
        await client.rewind_files(echo.uuid)
        with pytest.raises(Exception, match="no user message"):
            await client.rewind_files("0b9f7e2a-5e8f-4e8b-9c1e-3c2f8d7a6b5c")

    assert (tmp_path / "a.txt").read_text() == "one" and not (tmp_path / "b.txt").exists()


async def test_a_peer_call_is_a_task_that_stop_task_cancels(tmp_path: Path) -> None:
    agents = tmp_path / ".moot" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Thinks.\nmodel: inherit\n---\nThink.\n"
    )
    call = {"name": "call_agent", "arguments": {"agent_name": "helper", "message": "think long"}}
    options = sdk_options(tmp_path, [])
    (tmp_path / "script.json").write_text(
        json.dumps(
            {
                "agents": {
                    "moot": [{"tool_calls": [call]}, {"text": "stopped it"}],
                    "helper": [{"text": "never said", "delay": 60}],
                }
            }
        )
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("start a helper")
        messages: list[Any] = []
        async for message in client.receive_response():
            messages.append(message)
            if isinstance(message, TaskStartedMessage):
                await client.stop_task(message.task_id)

    (started,) = [m for m in messages if isinstance(m, TaskStartedMessage)]
    (ended,) = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert started.description == "think long" and ended.task_id == started.task_id
    assert ended.status == "stopped"
    assert messages[-1].result == "stopped it"
