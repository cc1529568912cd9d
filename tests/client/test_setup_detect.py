"""What the first-run screen finds and does, without the screen: keys, local servers (a real
HTTP server on 127.0.0.1), the models offered, a key saved as `moot login` saves it, the model
remembered, and the shipped demo played through a real session."""

from __future__ import annotations

import json
import socket
import stat
import time
from pathlib import Path

import pytest

from model_server import ModelServer, Reply
from moot.cli.login import LoginError, save_login_key
from moot.client import setup_detect
from moot.client.local import SessionOptions, open_client
from moot.protocol import events as ev
from moot.settings import SettingsError, load_settings
from moot.testing.drive import approve, drive_turn


def env(home: Path, **extra: str) -> dict[str, str]:
    """An environment with no keys or endpoints but `extra`, and moot's files under `home`."""
    return {"MOOT_HOME": str(home), "PATH": "/usr/bin:/bin", **extra}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def json_reply(data: object) -> Reply:
    return Reply(body=json.dumps(data).encode(), content_type="application/json")


def test_keys_are_found_in_the_environment_and_the_key_file_never_shown(
    private_moot_home: Path,
) -> None:
    environ = env(private_moot_home, ANTHROPIC_API_KEY="sk-ant-secret-1")
    save_login_key("openai", "sk-openai-secret-2")
    keys = {k.provider: k for k in setup_detect.detect_keys(environ)}
    assert keys["anthropic"].source == "ANTHROPIC_API_KEY"
    assert keys["openai"].source == "key file"
    assert keys["gemini"].source is None
    assert keys["gemini"].variables == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert "openai-chat" not in keys  # it reads OpenAI's variable: nothing new to say
    assert "ollama" not in keys and "lmstudio" not in keys  # local servers take no key
    assert "secret" not in repr(keys)


def test_a_key_that_cannot_be_sent_is_reported_without_the_key(tmp_path: Path) -> None:
    keys = setup_detect.detect_keys(env(tmp_path, GEMINI_API_KEY="AIza\x01hidden"))
    gemini = next(k for k in keys if k.provider == "gemini")
    assert gemini.problem and "control or non-ASCII" in gemini.problem
    assert "hidden" not in gemini.problem
    detection = setup_detect.Detection(keys)
    assert not detection.has_key("gemini")


def test_local_servers_answering_list_their_models(tmp_path: Path) -> None:
    with ModelServer() as ollama, ModelServer() as lmstudio:
        ollama.reply(
            json_reply({"models": [{"name": "qwen3-coder:latest"}, {"name": "llama3:8b"}]})
        )
        lmstudio.reply(json_reply({"data": [{"id": "qwen2.5-coder-7b"}]}))
        environ = env(
            tmp_path,
            OLLAMA_HOST=ollama.url,
            LMSTUDIO_BASE_URL=lmstudio.url + "/v1",
            # A proxy for the internet must not carry a request to this machine.
            HTTP_PROXY=f"http://127.0.0.1:{free_port()}",
            http_proxy=f"http://127.0.0.1:{free_port()}",
        )
        servers = {s.provider: s for s in setup_detect.probe_local(environ)}
        assert [r.path for r in ollama.requests] == ["/api/tags"]
        assert [r.path for r in lmstudio.requests] == ["/v1/models"]
    assert servers["ollama"].answering
    assert servers["ollama"].models == ("ollama/qwen3-coder", "ollama/llama3:8b")
    assert servers["ollama"].host == f"127.0.0.1:{ollama.port}"
    assert servers["lmstudio"].models == ("lmstudio/qwen2.5-coder-7b",)
    detection = setup_detect.Detection((), tuple(servers.values()))
    choices = setup_detect.model_choices(detection)
    assert [c.name for c in choices[:3]] == [
        "ollama/qwen3-coder",
        "ollama/llama3:8b",
        "lmstudio/qwen2.5-coder-7b",
    ]
    assert all(c.ready for c in choices[:3]) and not any(c.ready for c in choices[3:])


def test_a_port_nobody_answers_on_or_another_server_is_no_local_server(tmp_path: Path) -> None:
    with ModelServer() as other:
        other.reply(json_reply({"hello": "world"}))
        environ = env(tmp_path, OLLAMA_HOST=other.url, LMSTUDIO_BASE_URL=f"127.0.0.1:{free_port()}")
        started = time.monotonic()
        servers = {s.provider: s for s in setup_detect.probe_local(environ)}
        took = time.monotonic() - started
    assert (
        not servers["ollama"].answering and servers["ollama"].note == "answers, but not as Ollama"
    )
    assert not servers["lmstudio"].answering and servers["lmstudio"].note == "no answer"
    assert took < setup_detect.PROBE_TIMEOUT_S + 1.0  # both at once, each bounded


def test_models_with_a_key_come_first_in_the_catalogs_order(tmp_path: Path) -> None:
    keys = setup_detect.detect_keys(env(tmp_path, OPENAI_API_KEY="sk-x"))
    choices = setup_detect.model_choices(setup_detect.Detection(keys))
    ready = [c.name for c in choices if c.ready]
    assert ready and all(name.startswith("openai/") for name in ready)
    assert [c.name for c in choices[: len(ready)]] == ready
    assert "anthropic/claude-sonnet-4-5" in [c.name for c in choices]
    sonnet = next(c for c in choices if c.name == "anthropic/claude-sonnet-4-5")
    assert sonnet.detail == "200k ctx  $3/$15"


def test_a_broken_user_catalog_still_lists_the_built_in_models(private_moot_home: Path) -> None:
    (private_moot_home / "config").mkdir(parents=True)
    (private_moot_home / "config" / "models.json").write_text("{ not json")
    detection = setup_detect.detect(timeout=0.2)
    assert detection.catalog_problem and "models.json" in detection.catalog_problem
    assert any(c.name == "openai/gpt-5" for c in setup_detect.model_choices(detection))


def test_a_key_is_saved_as_moot_login_saves_it(private_moot_home: Path) -> None:
    path = setup_detect.save_key("anthropic", "  sk-ant-pasted\n")
    assert path == private_moot_home / "config" / "keys.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"anthropic": "sk-ant-pasted"}
    keys = {k.provider: k for k in setup_detect.detect_keys()}
    assert keys["anthropic"].source in ("key file", "ANTHROPIC_API_KEY")


@pytest.mark.parametrize(
    ("provider", "key", "says"),
    [
        ("anthropic", "   \n", "no key given"),
        ("anthropic", "sk-ant\x1b[2Jx", "control or non-ASCII"),
        ("anthropic", "sk-ant-é", "control or non-ASCII"),
        ("ollama", "sk-x", "takes no key"),
        ("nope", "sk-x", "takes no key"),
    ],
)
def test_a_key_that_cannot_be_used_is_refused_and_nothing_is_saved(
    private_moot_home: Path, provider: str, key: str, says: str
) -> None:
    with pytest.raises(LoginError, match=says) as refused:
        setup_detect.save_key(provider, key)
    assert key.strip() not in str(refused.value) or not key.strip()
    assert not (private_moot_home / "config" / "keys.json").exists()


def test_the_model_is_remembered_in_the_user_settings(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert setup_detect.needs_setup(project, None)
    assert not setup_detect.needs_setup(project, "openai/gpt-5")  # --model or MOOT_MODEL
    path = setup_detect.remember_model("anthropic/claude-sonnet-4-5")
    path.write_text(json.dumps({**json.loads(path.read_text()), "sandbox": "none"}))
    setup_detect.remember_model("openai/gpt-5")
    assert json.loads(path.read_text()) == {"model": "openai/gpt-5", "sandbox": "none"}
    assert load_settings(project).model == "openai/gpt-5"
    assert not setup_detect.needs_setup(project, None)


def test_a_broken_settings_file_is_not_a_first_run(tmp_path: Path) -> None:
    (tmp_path / ".moot").mkdir()
    (tmp_path / ".moot" / "settings.json").write_text("[1, 2]")
    assert not setup_detect.needs_setup(tmp_path, None)  # opening the session says what is wrong


def test_a_model_is_not_remembered_over_a_broken_user_settings_file(
    private_moot_home: Path,
) -> None:
    settings = private_moot_home / "config" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"model": ')
    with pytest.raises(SettingsError, match="not valid JSON"):
        setup_detect.remember_model("openai/gpt-5")
    assert settings.read_text() == '{"model": '  # left as it was


async def test_the_shipped_demo_reads_asks_before_its_edit_and_answers() -> None:
    assert setup_detect.demo_script().is_file()
    workspace = setup_detect.demo_workspace()
    (workspace / "greeting.py").write_text("changed by an earlier demo\n")
    workspace = setup_detect.demo_workspace()  # written fresh each time
    client = open_client(
        SessionOptions(cwd=workspace, model=setup_detect.demo_model(), permission_mode="default")
    )
    try:
        outcome = await drive_turn(client, setup_detect.DEMO_TASK, answer=approve)
    finally:
        await client.close()
    tools = [(e.tool, e.is_error) for e in outcome.of(ev.ToolFinished)]
    assert tools == [("read", False), ("edit", False)]
    asked = outcome.of(ev.ApprovalRequested)
    assert [a.tool for a in asked] == ["edit"]
    assert "hello" in (workspace / "greeting.py").read_text()
    assert outcome.finished.output.startswith("That was the demo.")
