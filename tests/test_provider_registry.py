"""Model names, credentials, endpoints and the fallback router."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from moot.protocol.messages import UserMessage
from moot.providers import credentials
from moot.providers.base import ModelRequest, ProviderError, TextPart
from moot.providers.registry import UnknownModel, model_config
from moot.providers.router import FallbackProvider
from moot.providers.scripted import ScriptedProvider


def env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"MOOT_HOME": str(tmp_path), **values}


def test_model_names_pick_provider_endpoint_and_key(tmp_path: Path) -> None:
    config = model_config("anthropic/claude-sonnet-4-5", env(tmp_path, ANTHROPIC_API_KEY="k1"))
    assert (config.provider, config.model, config.api_key) == (
        "anthropic",
        "claude-sonnet-4-5",
        "k1",
    )
    assert config.base_url == "https://api.anthropic.com"
    config = model_config(
        "openai/gpt-5", env(tmp_path, OPENAI_API_KEY="k2", OPENAI_BASE_URL="http://127.0.0.1:9/v1/")
    )
    assert config.base_url == "http://127.0.0.1:9/v1"
    config = model_config("openrouter/openai/gpt-5-mini", env(tmp_path, OPENROUTER_API_KEY="k3"))
    assert (config.provider, config.model) == ("openrouter", "openai/gpt-5-mini")
    assert model_config("gemini/gemini-2.5-pro", env(tmp_path, GOOGLE_API_KEY="g")).api_key == "g"


def test_local_servers_need_no_key_and_ollama_host_may_lack_a_scheme(tmp_path: Path) -> None:
    config = model_config("ollama/qwen3-coder", env(tmp_path, OLLAMA_HOST="gpu-box:11434"))
    assert (config.api_key, config.base_url) == (None, "http://gpu-box:11434")


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("claude", "provider/model"),
        ("nosuch/model", "unknown provider 'nosuch'"),
        ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ("gemini/gemini-2.5-pro", "GEMINI_API_KEY or GOOGLE_API_KEY"),
    ],
)
def test_clear_errors_for_bad_names_and_missing_keys(tmp_path: Path, spec: str, words: str) -> None:
    with pytest.raises(UnknownModel, match=words):
        model_config(spec, env(tmp_path))


def test_timeouts_come_from_the_environment(tmp_path: Path) -> None:
    values = env(tmp_path, OPENAI_API_KEY="k", MOOT_CONNECT_TIMEOUT="2", MOOT_READ_TIMEOUT="30")
    config = model_config("openai/gpt-5", values)
    assert (config.connect_timeout, config.read_timeout) == (2.0, 30.0)
    with pytest.raises(UnknownModel, match="MOOT_READ_TIMEOUT"):
        model_config("openai/gpt-5", {**values, "MOOT_READ_TIMEOUT": "soon"})


def test_a_saved_key_is_private_and_used_after_the_environment(tmp_path: Path) -> None:
    values = env(tmp_path)
    path = credentials.save_key("anthropic", "saved-key", values)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert model_config("anthropic/claude-haiku-4-5", values).api_key == "saved-key"
    key, source = credentials.find_key("anthropic", {**values, "ANTHROPIC_API_KEY": "env-key"})
    assert (key, source.source) == ("env-key", "ANTHROPIC_API_KEY")
    credentials.save_key("openai", "other", values)
    assert credentials.saved_keys(values) == {"anthropic": "saved-key", "openai": "other"}


def test_the_config_never_shows_its_key(tmp_path: Path) -> None:
    config = model_config("anthropic/claude-haiku-4-5", env(tmp_path, ANTHROPIC_API_KEY="sk-x"))
    assert "sk-x" not in repr(config)


REQUEST = ModelRequest(model="m", system="", messages=(UserMessage(content="hi"),))


class Failing:
    def __init__(self, name: str, *, after_output: bool = False) -> None:
        self.name, self.after_output, self.calls = name, after_output, 0

    async def stream(self, request: ModelRequest):
        self.calls += 1
        if self.after_output:
            yield TextPart("partial")
        raise ProviderError(f"{self.name} is down", retryable=True)


async def test_the_router_falls_back_and_cools_failed_models_down() -> None:
    now = [0.0]
    first, second = Failing("a"), ScriptedProvider(["from b", "again b", "b3"])
    router = FallbackProvider([first, second], cooldown=30, clock=lambda: now[0])
    assert [d async for d in router.stream(REQUEST) if isinstance(d, TextPart)] == [
        TextPart("from b")
    ]
    [d async for d in router.stream(REQUEST)]
    assert first.calls == 1  # cooling down: not asked again
    now[0] = 31.0
    [d async for d in router.stream(REQUEST)]
    assert first.calls == 2


async def test_the_router_never_falls_back_after_output() -> None:
    router = FallbackProvider([Failing("a", after_output=True), ScriptedProvider(["b"])])
    with pytest.raises(ProviderError, match="a is down"):
        [d async for d in router.stream(REQUEST)]


async def test_when_every_model_fails_the_error_names_them_all() -> None:
    router = FallbackProvider([Failing("a"), Failing("b")])
    with pytest.raises(ProviderError, match="a is down; b is down"):
        [d async for d in router.stream(REQUEST)]
    # All cooling down: the one that recovers first is still tried.
    with pytest.raises(ProviderError):
        [d async for d in router.stream(REQUEST)]
    assert router.providers[0].calls == 2


def test_images_are_replaced_by_a_note_for_text_only_models() -> None:
    from moot.protocol.messages import Attachment, ToolResultMessage, without_images
    from moot.providers.anthropic import AnthropicProvider
    from moot.providers.catalog import accepts_images
    from moot.providers.config import ProviderConfig

    image = Attachment(mime_type="image/png", data="iVBORw0KGgo=")
    messages = [
        UserMessage(content="look", attachments=(image,)),
        ToolResultMessage(tool_call_id="t", name="read", content="", attachments=(image, image)),
    ]
    stripped = without_images(messages)
    assert [m.content for m in stripped] == [
        "look\n[1 image(s) omitted: this model does not accept images]",
        "[2 image(s) omitted: this model does not accept images]",
    ]
    assert all(not m.attachments for m in stripped)
    text_only = AnthropicProvider(ProviderConfig("deepseek", "deepseek-chat", "http://x"))
    vision = AnthropicProvider(ProviderConfig("anthropic", "claude-sonnet-4-5", "http://x"))
    assert (accepts_images(text_only), accepts_images(vision)) == (False, True)
    assert accepts_images(ScriptedProvider([]))


def test_a_user_catalog_adds_and_overrides_models(tmp_path: Path, monkeypatch) -> None:
    from moot.providers import catalog

    monkeypatch.setenv("MOOT_HOME", str(tmp_path))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "models.json").write_text(
        '{"ollama/qwen3-coder": {"context_window": 262144, "images": false, "input": 0,'
        ' "output": 0}, "anthropic/claude-haiku-4-5": {"context_window": 1000}}'
    )
    assert catalog.lookup("ollama/qwen3-coder").context_window == 262144
    assert catalog.lookup("ollama/qwen3-coder").known
    assert catalog.lookup("anthropic/claude-haiku-4-5").context_window == 1000
    assert catalog.lookup("anthropic/claude-sonnet-4-5").context_window == 200000
