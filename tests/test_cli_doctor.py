"""`moot doctor` and `moot login`: configuration shown without secrets; real checks."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from model_server import ModelServer, Reply
from wire_builders import anthropic

KEY = "sk-ant-doctor-secret-123"


def moot(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and k != "OLLAMA_HOST"
    }
    return env | {"MOOT_HOME": str(tmp_path)} | extra


def test_doctor_lists_providers_and_key_sources_never_keys(tmp_path: Path) -> None:
    result = moot(["doctor"], clean_env(tmp_path, ANTHROPIC_API_KEY=KEY))
    assert result.returncode == 0
    assert "anthropic    key from ANTHROPIC_API_KEY" in result.stdout
    assert "openai       no key (OPENAI_API_KEY)" in result.stdout
    assert "ollama       no key needed" in result.stdout
    assert KEY not in result.stdout + result.stderr


def test_doctor_check_reports_latency_or_the_error(tmp_path: Path) -> None:
    with ModelServer() as server:
        server.reply(
            Reply(body=anthropic("OK")),
            Reply(401, b'{"type":"error","error":{"type":"authentication_error","message":"bad"}}'),
        )
        env = clean_env(tmp_path, ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        good = moot(["doctor", "--check"], env)
        bad = moot(["doctor", "--check", "--model", "anthropic/claude-haiku-4-5"], env)
        (request, _) = server.requests
    assert good.returncode == 0, good.stdout + good.stderr
    assert "anthropic/claude-haiku-4-5: ok (first token" in good.stdout
    assert request.json["max_tokens"] == 16
    assert bad.returncode == 1
    assert "anthropic/claude-haiku-4-5: error:" in bad.stdout
    assert "HTTP 401" in bad.stdout and "bad" in bad.stdout
    assert KEY not in good.stdout + bad.stdout


def test_doctor_check_with_no_keys_says_so(tmp_path: Path) -> None:
    result = moot(["doctor", "--check"], clean_env(tmp_path))
    assert result.returncode == 1
    assert "nothing to check" in result.stdout


def test_login_saves_a_private_key_that_models_then_use(tmp_path: Path) -> None:
    result = moot(["login", "anthropic"], clean_env(tmp_path), stdin="sk-saved-key\n")
    assert result.returncode == 0, result.stderr
    path = tmp_path / "config" / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "sk-saved-key" not in result.stdout
    listed = moot(["doctor"], clean_env(tmp_path))
    assert "anthropic    key from key file" in listed.stdout
    refused = moot(["login", "ollama"], clean_env(tmp_path), stdin="x\n")
    assert refused.returncode == 2
