"""`moot doctor` and `moot login`: configuration shown without secrets; real checks."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from model_server import ModelServer, Reply
from trusted import trust_settings
from wire_builders import anthropic

KEY = "sk-ant-doctor-secret-123"


def moot(
    args: list[str], env: dict[str, str], stdin: str = "", cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """`moot args` in `cwd` (by default MOOT_HOME, so no project's `.moot/settings.json` counts)."""
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        cwd=cwd or env["MOOT_HOME"],
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
        if not k.endswith(("_API_KEY", "_BASE_URL"))
        and k != "OLLAMA_HOST"
        and not k.startswith("MOOT_")
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


def test_doctor_reads_keys_and_endpoints_from_the_settings_env(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".moot").mkdir(parents=True)
    with ModelServer() as server:
        settings = {
            "env": {
                "ANTHROPIC_API_KEY": KEY,
                "ANTHROPIC_BASE_URL": server.url,
                "OPENAI_BASE_URL": "http://from-settings.invalid",
                "MOOT_REASONING_EFFORT": "low",
            },
            # A model the catalog does not know, said to think: only then is thinking sent.
            "models": {"anthropic/house-claude": {"thinking": True}},
        }
        (project / ".moot" / "settings.json").write_text(json.dumps(settings))
        trust_settings(project, tmp_path / "home")
        server.reply(Reply(body=anthropic("OK")), Reply(body=anthropic("OK", n=2)))
        env = clean_env(tmp_path / "home", OPENAI_BASE_URL="http://from-shell.invalid")
        listed = moot(["doctor"], env, cwd=project)
        checked = moot(["doctor", "--check"], env, cwd=project)
        house = moot(["doctor", "--check", "--model", "anthropic/house-claude"], env, cwd=project)
        requests = list(server.requests)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:]}
    assert rows["anthropic"] == ["anthropic", "key", "from", "ANTHROPIC_API_KEY", server.url]
    assert rows["openai"][-1] == "http://from-shell.invalid"  # the process's environment wins
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "anthropic/claude-haiku-4-5: ok (first token" in checked.stdout
    default, named = requests
    assert default.headers["x-api-key"] == KEY
    assert default.json["model"] == "claude-haiku-4-5"
    assert house.returncode == 0, house.stdout + house.stderr
    assert "anthropic/house-claude: ok" in house.stdout
    assert named.json["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert KEY not in listed.stdout + checked.stdout + house.stdout + house.stderr


def test_doctor_reports_bad_settings_as_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / ".moot").mkdir()
    (tmp_path / ".moot" / "settings.json").write_text('{"env": {"A": 1}')
    result = moot(["doctor"], clean_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("moot: ") and "settings.json" in result.stderr
    assert result.stdout == ""


def test_doctor_check_with_no_keys_says_so(tmp_path: Path) -> None:
    result = moot(["doctor", "--check"], clean_env(tmp_path))
    assert result.returncode == 1
    assert "nothing to check" in result.stdout


def test_login_saves_a_private_key_that_models_then_use(tmp_path: Path) -> None:
    with ModelServer() as server:
        server.reply(Reply(body=anthropic("OK")))
        env = clean_env(tmp_path, ANTHROPIC_BASE_URL=server.url)
        result = moot(["login", "anthropic"], env, stdin="sk-saved-key\n")
        (tried,) = server.requests
    assert result.returncode == 0, result.stderr
    assert tried.headers["x-api-key"] == "sk-saved-key"  # tried before it was saved
    assert "anthropic took it" in result.stdout
    path = tmp_path / "config" / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "sk-saved-key" not in result.stdout
    listed = moot(["doctor"], clean_env(tmp_path))
    assert "anthropic    key from key file" in listed.stdout
    refused = moot(["login", "ollama"], clean_env(tmp_path), stdin="x\n")
    assert refused.returncode == 2


def test_login_saves_nothing_the_provider_refuses_and_names_the_providers(tmp_path: Path) -> None:
    """Issue 29, item 10: `moot login` saved a key without checking it."""
    with ModelServer() as server:
        server.reply(
            Reply(401, b'{"type":"error","error":{"type":"authentication_error","message":"bad"}}')
        )
        env = clean_env(tmp_path, ANTHROPIC_BASE_URL=server.url)
        refused = moot(["login", "anthropic"], env, stdin="sk-wrong-key\n")
    assert refused.returncode == 2
    assert "anthropic refused the key (HTTP 401)" in refused.stderr
    assert "sk-wrong-key" not in refused.stderr + refused.stdout
    assert not (tmp_path / "config" / "keys.json").exists()
    unchecked = moot(["login", "anthropic", "--no-check"], env, stdin="sk-wrong-key\n")
    assert unchecked.returncode == 0 and (tmp_path / "config" / "keys.json").exists()
    helped = moot(["login", "--help"], clean_env(tmp_path))
    assert "one of: anthropic, openai" in " ".join(helped.stdout.split())


def test_login_refuses_a_key_no_request_could_carry(tmp_path: Path) -> None:
    # It used to be saved, and then every start failed on it; now nothing is saved.
    result = moot(["login", "anthropic"], clean_env(tmp_path), stdin="sk-ant\x1b[2Jrest\n")
    assert result.returncode == 2
    assert "control or non-ASCII" in result.stderr and "rest" not in result.stderr
    assert not (tmp_path / "config" / "keys.json").exists()


def test_doctor_hides_credentials_in_base_urls(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path,
        OPENAI_BASE_URL="https://team:tok3n@gw.example.com/v1?api-key=qs3cret",
        OPENROUTER_BASE_URL="gw.example.com/or/v1?key=qs3cret",
    )
    result = moot(["doctor"], env)
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split()[-1] for line in result.stdout.splitlines()[1:]}
    assert rows["openai"] == "https://***@gw.example.com/v1?***"
    assert rows["openrouter"] == "https://gw.example.com/or/v1?***"
    assert rows["anthropic"] == "https://api.anthropic.com"
    assert "tok3n" not in result.stdout and "qs3cret" not in result.stdout


def test_doctor_names_an_unusable_key_without_showing_it(tmp_path: Path) -> None:
    bad = KEY[:12] + "\n" + KEY[12:]
    env = clean_env(tmp_path, ANTHROPIC_API_KEY=bad)
    listed = moot(["doctor"], env)
    checked = moot(["doctor", "--check"], env)
    assert listed.returncode == 0, listed.stderr
    assert "anthropic    unusable key: ANTHROPIC_API_KEY holds a control" in listed.stdout
    assert checked.returncode == 1
    assert "anthropic/claude-haiku-4-5: ANTHROPIC_API_KEY holds a control" in checked.stdout
    shown = listed.stdout + listed.stderr + checked.stdout + checked.stderr
    assert KEY[:12] not in shown and KEY[12:] not in shown
