"""The TypeScript Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, with node) drives `moot`
through `pathToClaudeCodeExecutable`, a two-line shim, with a scripted model.

The SDK is not a Python dependency: set `MOOT_TS_AGENT_SDK` to a `node_modules` directory that
holds it (`npm install @anthropic-ai/claude-agent-sdk --omit=optional` installs it without
Claude Code's own binary; `.ci/run` does); without it these tests are skipped, and fail in CI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_sdk_options import moot_cli_shim

SDK = os.environ.get("MOOT_TS_AGENT_SDK", "")


@pytest.fixture(autouse=True)
def _the_sdk_is_set_up() -> None:
    """CI sets the SDK up (`.ci/run`), so there its absence fails; elsewhere it skips."""
    if SDK and shutil.which("node") is not None:
        return
    missing = "MOOT_TS_AGENT_SDK (a node_modules holding the SDK) and node are not set up"
    if os.environ.get("CI"):
        pytest.fail(missing)
    pytest.skip(missing)


DRIVE = Path(__file__).with_name("ts_sdk") / "drive.mjs"


def _drive(tmp_path: Path, scenario: str, turns: list[Any], **env: str) -> list[dict[str, Any]]:
    shim, script = moot_cli_shim(tmp_path, turns)
    result = subprocess.run(
        ["node", str(DRIVE), str(shim), str(tmp_path), scenario],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **os.environ,
            "NODE_PATH": SDK,
            "MOOT_MODEL": f"scripted:{script}",
            "MOOT_HOME": str(tmp_path / "home"),
            **env,
        },
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_one_shot_query_from_typescript(tmp_path: Path) -> None:
    init, answer, end, _ = _drive(tmp_path, "oneshot", [{"text": "Hello from moot."}])

    assert (init["type"], init["subtype"]) == ("system", "init")
    assert answer["message"]["content"] == [{"type": "text", "text": "Hello from moot."}]
    assert (end["type"], end["subtype"], end["result"]) == ("result", "success", "Hello from moot.")


def test_a_multi_turn_session_from_typescript_with_an_interrupt(tmp_path: Path) -> None:
    turns = [{"text": "first"}, {"text": "never said", "delay": 60}, {"text": "third"}]
    messages = _drive(tmp_path, "multiturn", turns)

    results = [m for m in messages if m["type"] == "result"]
    assert [(r["subtype"], r["is_error"]) for r in results] == [
        ("success", False),
        ("error_during_execution", True),
        ("success", False),
    ]
    assert (results[0]["result"], results[2]["result"]) == ("first", "third")
    assert results[1]["stop_reason"] == "user_cancelled"
    assert len({r["session_id"] for r in results}) == 1
    assert [a[0] for a in messages[-1]["asked"]] == ["interrupt"]


def test_can_use_tool_from_typescript_allows_one_bash_call_and_denies_another(
    tmp_path: Path,
) -> None:
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch allowed.txt"}}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch denied.txt"}}]},
        {"text": "done"},
    ]
    messages = _drive(tmp_path, "tools", turns)

    assert messages[-1]["asked"] == [["bash", "touch allowed.txt"], ["bash", "touch denied.txt"]]
    assert (tmp_path / "allowed.txt").exists() and not (tmp_path / "denied.txt").exists()
    assert messages[-2]["result"] == "done"


def test_added_directories_and_settings_from_typescript(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (tmp_path / ".moot").mkdir()  # the project's deny, left out by settingSources
    (tmp_path / ".moot" / "settings.json").write_text('{"permissions": {"deny": ["write"]}}')
    write = {"path": f"{other}/new.txt", "content": "x"}
    turns = [
        {"tool_calls": [{"name": "write", "arguments": write}]},
        {"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]},
        {"text": "done"},
    ]
    messages = _drive(tmp_path, "dirs", turns, OTHER=str(other))

    assert (other / "new.txt").read_text() == "x"
    assert messages[-1]["asked"] == [["write", f"{other}/new.txt"]]  # echo: the settings allow
    assert messages[-2]["result"] == "done"


def test_a_resume_from_typescript(tmp_path: Path) -> None:
    turns = [{"text": "first answer"}, {"text": "second answer"}]
    first = _drive(tmp_path, "oneshot", turns)
    session = first[-2]["session_id"]

    second = _drive(tmp_path, "resume", turns, RESUME=session)

    assert (second[-2]["session_id"], second[-2]["result"]) == (session, "second answer")


def test_a_pre_tool_use_hook_from_typescript_refuses_a_call(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "touch hooked.txt"}}]},
        {"text": "done"},
    ]
    messages = _drive(tmp_path, "hook", turns)

    assert messages[-1]["asked"] == [["PreToolUse", "touch hooked.txt"]]
    assert not (tmp_path / "hooked.txt").exists()
    refusal = next(m for m in messages if m["type"] == "user")["message"]["content"][0]
    assert refusal["is_error"] and "no shell today" in refusal["content"]


def test_a_json_schema_answer_from_typescript(tmp_path: Path) -> None:
    messages = _drive(tmp_path, "schema", [{"text": "three"}, {"text": '{"files": 3}'}])

    assert messages[-2]["structured_output"] == {"files": 3}


def test_an_in_process_tool_from_typescript(tmp_path: Path) -> None:
    turns = [
        {"tool_calls": [{"name": "mcp__calc__add", "arguments": {"a": 2, "b": 3}}]},
        {"text": "The sum is 5."},
    ]
    messages = _drive(tmp_path, "mcp", turns)

    assert messages[-1]["asked"] == [["add", 2, 3]]
    assert messages[-2]["result"] == "The sum is 5."
