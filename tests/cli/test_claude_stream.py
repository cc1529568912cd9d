"""`--output-format stream-json` and `json` speak Claude Code's headless protocol: every line
is read by the real Claude Agent SDK's own message parser (`claude_agent_sdk`), with nothing
left over; moot's own events are `--output-format events`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk._internal.message_parser import parse_message

from moot.protocol import events as ev

TIMEOUT = 30
MODEL = ("--model", "scripted:s.yaml")
STREAMED = ("--input-format", "stream-json", "--output-format", "stream-json")

READ_THEN_ANSWER = """
turns:
  - thinking: Look first.
    text: Reading it.
    tool_calls:
      - {name: read, arguments: {path: a.txt}}
    usage: {input_tokens: 100, output_tokens: 20}
    cost_usd: 0.001
  - text: It says hi.
    usage: {input_tokens: 120, output_tokens: 5}
    cost_usd: 0.002
"""


def _moot(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "a.txt").write_text("hi\n")
    (tmp_path / "s.yaml").write_text(READ_THEN_ANSWER)
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    env.pop("MOOT_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "what does a.txt say?", *MODEL, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=TIMEOUT,
    )


def _parsed(stdout: str) -> list[object]:
    lines = stdout.splitlines()
    messages = [parse_message(json.loads(line)) for line in lines]
    assert None not in messages  # the parser skips a type it does not know
    return messages


def test_stream_json_is_read_whole_by_the_agent_sdks_parser(tmp_path: Path) -> None:
    result = _moot(tmp_path, "--output-format", "stream-json")

    assert result.returncode == 0, result.stderr
    init, assistant, tool_result, answer, end = _parsed(result.stdout)
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    session = init.data["session_id"]
    assert session.startswith("ses_")
    assert init.data["cwd"] == str(tmp_path)
    assert init.data["model"] == "scripted:s.yaml"
    assert init.data["permissionMode"] == "default"
    assert "bash" in init.data["tools"] and init.data["mcp_servers"] == []
    assert "code-review" in init.data["slash_commands"]

    assert isinstance(assistant, AssistantMessage)
    thinking, text, call = assistant.content
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking == "Look first."
    assert isinstance(text, TextBlock) and text.text == "Reading it."
    assert isinstance(call, ToolUseBlock) and (call.name, call.input) == ("read", {"path": "a.txt"})
    assert assistant.session_id == session and assistant.parent_tool_use_id is None

    assert isinstance(tool_result, UserMessage)
    (block,) = tool_result.content
    assert isinstance(block, ToolResultBlock)
    assert block.tool_use_id == call.id and "hi" in str(block.content) and not block.is_error

    assert isinstance(answer, AssistantMessage) and answer.content == [TextBlock("It says hi.")]
    assert isinstance(end, ResultMessage)
    assert (end.subtype, end.is_error, end.result) == ("success", False, "It says hi.")
    assert (end.num_turns, end.session_id) == (2, session)
    assert end.total_cost_usd == pytest.approx(0.003)
    assert end.usage is not None and end.usage["input_tokens"] == 220
    assert 0 <= end.duration_api_ms <= end.duration_ms


def test_partial_messages_stream_the_answer_as_anthropic_stream_events(tmp_path: Path) -> None:
    result = _moot(tmp_path, "--output-format", "stream-json", "--include-partial-messages")

    assert result.returncode == 0, result.stderr
    streamed = [m.event for m in _parsed(result.stdout) if isinstance(m, StreamEvent)]
    kinds = [e["type"] for e in streamed]
    assert kinds[:3] == ["message_start", "content_block_start", "content_block_delta"]
    assert kinds.count("message_start") == kinds.count("message_stop") == 2
    texts = [e["delta"].get("text", "") for e in streamed if e["type"] == "content_block_delta"]
    assert "".join(texts) == "Reading it.It says hi."


def test_json_is_the_result_message_and_a_limit_is_its_error_subtype(tmp_path: Path) -> None:
    result = _moot(tmp_path, "--output-format", "json", "--max-turns", "1")

    assert result.returncode == 1
    (end,) = _parsed(result.stdout)
    assert isinstance(end, ResultMessage)
    assert (end.subtype, end.is_error, end.num_turns) == ("error_max_turns", True, 1)
    assert end.errors


def test_events_are_moots_own_stored_events(tmp_path: Path) -> None:
    result = _moot(tmp_path, "--output-format", "events")

    assert result.returncode == 0, result.stderr
    events = [ev.event_from_json(line) for line in result.stdout.splitlines()]
    assert isinstance(events[0], ev.TurnStarted) and isinstance(events[-1], ev.TurnFinished)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


def _piped(tmp_path: Path, lines: list[dict[str, object]]) -> list[dict[str, object]]:
    (tmp_path / "s.yaml").write_text("turns: [{text: one}, {text: two}]")
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "MOOT_MODEL": "scripted:s.yaml"}
    result = subprocess.run(
        [sys.executable, "-m", "moot.cli", *STREAMED],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _user(text: str) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}}


def test_a_script_pipes_two_turns_and_reads_two_results(tmp_path: Path) -> None:
    out = _piped(tmp_path, [_user("first"), _user("second")])

    results = [m for m in out if m["type"] == "result"]
    assert [r["result"] for r in results] == ["one", "two"]
    assert results[0]["session_id"] == results[1]["session_id"]


def test_a_user_messages_image_and_document_blocks_go_with_the_turn(tmp_path: Path) -> None:
    import base64

    from images import pdf, png

    shot, spec = base64.b64encode(png()).decode(), base64.b64encode(pdf()).decode()
    content = [
        {"type": "text", "text": "compare"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": shot}},
        {
            "type": "document",
            "title": "spec.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": spec},
        },
    ]
    out = _piped(tmp_path, [{"type": "user", "message": {"role": "user", "content": content}}])
    (result,) = [m for m in out if m["type"] == "result"]
    export = ["sessions", "export", str(result["session_id"]), "--format", "json"]
    exported = subprocess.run(
        [sys.executable, "-m", "moot.cli", *export],
        capture_output=True,
        text=True,
        env={**os.environ, "MOOT_HOME": str(tmp_path / "home")},
        timeout=TIMEOUT,
        check=True,
    )
    events = json.loads(exported.stdout)["events"]
    (started,) = [e for e in events if e["kind"] == "turn_started"]
    assert started["prompt"] == "compare"
    assert [(a["mime_type"], a["name"], a["data"]) for a in started["attachments"]] == [
        ("image/png", None, shot),
        ("application/pdf", "spec.pdf", spec),
    ]


def test_initialize_fields_moot_cannot_honour_are_refused_by_name(tmp_path: Path) -> None:
    request = {"subtype": "initialize", "toolAliases": {"Bash": "Shell"}, "systemPrompt": ["x"]}
    initialize = {"type": "control_request", "request_id": "r1", "request": request}

    out = _piped(tmp_path, [initialize])

    (answer,) = [m for m in out if m["type"] == "control_response"]
    assert answer["response"]["subtype"] == "error"
    assert answer["response"]["request_id"] == "r1"
    assert "toolAliases" in answer["response"]["error"]
