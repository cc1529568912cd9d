"""End to end: `moot -p` against a real local server speaking each wire API.

A three-turn task (read a file, edit it with a tool, answer) over Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions, Gemini and an OpenAI-compatible preset (ollama), with the
conventional variables pointing moot at the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import wire_builders
from model_server import ModelServer, Reply

CASES = {
    "anthropic": (
        "anthropic/claude-haiku-4-5",
        "anthropic",
        lambda url: {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"},
        "/v1/messages",
    ),
    "openai-responses": (
        "openai/gpt-5-mini",
        "openai_responses",
        lambda url: {"OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": "sk-test"},
        "/v1/responses",
    ),
    "openai-chat": (
        "openai-chat/gpt-4.1",
        "openai_chat",
        lambda url: {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-test"},
        "/v1/chat/completions",
    ),
    "gemini": (
        "gemini/gemini-2.5-flash",
        "gemini",
        lambda url: {"GEMINI_BASE_URL": url, "GEMINI_API_KEY": "AIza-test"},
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    ),
    "ollama": (
        "ollama/qwen3-coder",
        "openai_chat",
        lambda url: {"OLLAMA_HOST": url.removeprefix("http://")},
        "/v1/chat/completions",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_three_turn_task_over_each_wire_api(case: str, tmp_path: Path) -> None:
    model, api, variables, path = CASES[case]
    build = wire_builders.BUILDERS[api]
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello wrold\n")
    with ModelServer() as server:
        server.reply(
            Reply(body=build(call=("read", {"path": "notes.txt"}), n=1)),
            Reply(
                body=build(
                    call=("edit", {"path": "notes.txt", "old": "wrold", "new": "world"}), n=2
                )
            ),
            Reply(body=build(text="Fixed the typo in notes.txt.", n=3)),
        )
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.endswith(("_API_KEY", "_BASE_URL")) and key != "OLLAMA_HOST"
        }
        env |= {"MOOT_HOME": str(tmp_path / "home"), **variables(server.url)}
        result = subprocess.run(
            [sys.executable, "-m", "moot.cli", "-p", "fix the typo in notes.txt",
             "--model", model, "--output-format", "json", "--permission-mode", "acceptEdits"],
            cwd=work, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        requests = list(server.requests)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["output"] == "Fixed the typo in notes.txt."
    assert (answer["state"], answer["turns"]) == ("completed", 3)
    assert answer["usage"]["input_tokens"] == 300
    assert (work / "notes.txt").read_text() == "hello world\n"
    assert [r.path for r in requests] == [path] * 3
    # The model saw each tool's result on the following turn.
    assert "hello wrold" in requests[1].body.decode()
    assert "Edited notes.txt" in requests[2].body.decode()
    first = requests[0]
    if case == "ollama":
        assert "authorization" not in first.headers
    elif api == "anthropic":
        assert first.headers["x-api-key"] == "sk-ant-test"
        assert first.headers["anthropic-version"] == "2023-06-01"
    elif api == "gemini":
        assert first.headers["x-goog-api-key"] == "AIza-test"
    else:
        assert first.headers["authorization"] == "Bearer sk-test"
    tools = json.dumps(first.json)
    for name in ("read", "edit", "call_agent", "finish"):
        assert f'"{name}"' in tools
