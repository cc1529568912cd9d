"""The settings' `env`: model keys and base URLs come from it, and shell commands see it; a
variable set in the process's own environment wins over the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import wire_builders
from model_server import ModelServer, Reply
from trusted import trust_settings

MODEL = "anthropic/claude-haiku-4-5"


def run_moot(work: Path, home: Path, extra_env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "MOOT_")) and key != "GREETING"
    }
    env |= {"MOOT_HOME": str(home), **extra_env}
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "greet", "--model", MODEL,
         "--output-format", "json", "--allowedTools", "Bash(echo:*)"],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_keys_endpoints_and_command_variables_come_from_the_settings_env(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    build = wire_builders.anthropic
    with ModelServer() as server:
        settings = {
            "sandbox": "none",
            "env": {
                "ANTHROPIC_API_KEY": "sk-from-settings",
                "ANTHROPIC_BASE_URL": server.url,
                "GREETING": "hello from settings",
            },
        }
        (work / ".moot" / "settings.json").write_text(json.dumps(settings))
        trust_settings(work, tmp_path / "home")
        server.reply(
            Reply(body=build(call=("bash", {"command": "echo $GREETING"}), n=1)),
            Reply(body=build(text="Greeted.", n=2)),
        )
        result = run_moot(work, tmp_path / "home", {})
        requests = list(server.requests)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["output"] == "Greeted."
    assert requests[0].headers["x-api-key"] == "sk-from-settings"
    assert "hello from settings" in requests[1].body.decode()


def test_the_process_environment_wins_over_the_settings_env(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    with ModelServer() as server, ModelServer() as elsewhere:
        settings = {
            "env": {"ANTHROPIC_API_KEY": "sk-settings", "ANTHROPIC_BASE_URL": elsewhere.url}
        }
        (work / ".moot" / "settings.json").write_text(json.dumps(settings))
        trust_settings(work, tmp_path / "home")
        server.reply(Reply(body=wire_builders.anthropic(text="ok", n=1)))
        shell = {"ANTHROPIC_API_KEY": "sk-shell", "ANTHROPIC_BASE_URL": server.url}
        result = run_moot(work, tmp_path / "home", shell)
        seen, unseen = list(server.requests), list(elsewhere.requests)

    assert result.returncode == 0, result.stderr
    assert [r.headers["x-api-key"] for r in seen] == ["sk-shell"]
    assert unseen == []
