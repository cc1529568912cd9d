"""The flags Claude Code's Agent SDKs and scripts pass: read with Claude Code's meanings where
moot has the capability, refused by name where it has not (real `moot` subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model_server import ModelServer, Reply, sse_fixture

TIMEOUT = 30
THREE_TURNS = Path(__file__).parents[1] / "fixtures" / "three_turns.yaml"


def _moot(
    tmp_path: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), **(env or {})}
    environ.pop("MOOT_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environ,
        timeout=TIMEOUT,
    )


def test_the_sdks_prompt_and_tool_flags_reach_the_model_request(tmp_path: Path) -> None:
    key = "sk-ant-api03-flags-test-0000000000000000000000000000000000000000"
    with ModelServer() as server:
        server.reply(Reply(body=sse_fixture("anthropic", "text")))
        result = _moot(
            tmp_path,
            "-p", "--model", "anthropic/claude-haiku-4-5", "--verbose",
            "--system-prompt=Answer in French.", "--append-system-prompt=Be terse.",
            "--tools=Bash,Read", "--max-budget-usd=2", "--setting-sources=user,project,local",
            "--output-format=stream-json", "say hi",
            env={"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": key},
        )  # fmt: skip
        (request,) = server.requests

    assert result.returncode == 0, result.stderr
    body = request.json
    system = json.dumps(body["system"])
    assert "Answer in French." in system and "Be terse." in system
    assert "You are moot" not in system
    assert {t["name"] for t in body["tools"]} == {"bash", "read", "finish"}
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(messages[0]["tools"]) == ["bash", "read"]
    assert messages[-1]["type"] == "result"


def test_p_is_a_flag_and_the_task_follows_the_options_or_comes_on_stdin(tmp_path: Path) -> None:
    model = f"scripted:{THREE_TURNS}"
    after = _moot(tmp_path, "-p", "--model", model, "--output-format", "json", "how many?")
    piped = _moot(tmp_path, "--model", model, "-p", stdin="how many?")

    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["result"] == "The repository has 3 files."
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == "The repository has 3 files.\n"


def test_a_budget_stops_the_run_with_claude_codes_subtype(tmp_path: Path) -> None:
    result = _moot(
        tmp_path, "-p", "how many?", "--model", f"scripted:{THREE_TURNS}",
        "--max-budget-usd", "0.001", "--output-format", "json",
    )  # fmt: skip

    assert result.returncode == 1
    end = json.loads(result.stdout)
    assert (end["subtype"], end["is_error"], end["stop_reason"]) == (
        "error_max_budget_usd",
        True,
        "max_cost",
    )


def test_a_fallback_model_answers_when_the_first_fails(tmp_path: Path) -> None:
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps([{"error": "down"}]))
    result = _moot(
        tmp_path, "-p", "how many?", "--model", f"scripted:{failing}",
        "--fallback-model", f"scripted:{THREE_TURNS}",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert result.stdout == "The repository has 3 files.\n"


def test_mcp_config_servers_join_the_session(tmp_path: Path) -> None:
    config = {"mcpServers": {"echo": {"command": "true"}}}
    result = _moot(
        tmp_path, "-p", "how many?", "--model", f"scripted:{THREE_TURNS}",
        "--mcp-config", json.dumps(config), "--output-format", "stream-json",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    init = json.loads(result.stdout.splitlines()[0])
    assert [s["name"] for s in init["mcp_servers"]] == ["echo"]


def test_strict_mcp_config_leaves_out_the_repositorys_servers(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo": {"command": "true"}}}))
    config = json.dumps({"mcpServers": {"echo": {"command": "true"}}})
    common = ("-p", "how many?", "--model", f"scripted:{THREE_TURNS}", "--mcp-config", config)

    loose = _moot(tmp_path, *common, "--output-format", "stream-json")
    strict = _moot(tmp_path, *common, "--strict-mcp-config", "--output-format", "stream-json")

    def servers(result: subprocess.CompletedProcess[str]) -> list[str]:
        assert result.returncode == 0, result.stderr
        return sorted(s["name"] for s in json.loads(result.stdout.splitlines()[0])["mcp_servers"])

    assert servers(loose) == ["echo", "repo"]
    assert servers(strict) == ["echo"]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--fallback-model=nowhere/model"], "nowhere"),
        (["--add-dir=missing"], "--add-dir missing: not a directory"),
        (["--add-dir=/"], "--add-dir /: it holds the home directory"),
        (["--settings", "missing.json"], "--settings"),
        (["--settings", '{"model": 3}'], "--settings"),
        (["--session-id=not-a-uuid"], "--session-id"),
        (["--setting-sources=user,policy"], "policy"),
        (["--max-thinking-tokens=1024"], "--max-thinking-tokens"),
        (["--effort=extreme"], "--effort"),
        (["--tools=Bash,Teleport"], "Teleport"),
        (["--json-schema", "{"], "--json-schema"),
        (["--fork-session"], "--fork-session needs --resume"),
        (["--json-schema", '{"type": 12}'], "not a JSON Schema"),
        (["--mcp-config", '{"mcpServers": {"x": {"type": "ws", "url": "ws://x"}}}'], "ws"),
        (["--mcp-config", '{"mcpServers": {"x": {"type": "sdk", "name": "x"}}}'], "stream-json"),
    ],
)
def test_a_flag_moot_cannot_honour_is_refused_by_name(
    tmp_path: Path, flags: list[str], named: str
) -> None:
    result = _moot(tmp_path, "-p", "go", "--model", f"scripted:{THREE_TURNS}", *flags)

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("moot: ") and named in result.stderr
    assert "Traceback" not in result.stderr
