"""Model names, credentials, endpoints and the fallback router."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import msgspec
import pytest

from model_server import ModelServer, Reply, sse_fixture
from moot.protocol.messages import UserMessage
from moot.providers import credentials
from moot.providers.base import ModelRequest, ProviderError, TextPart
from moot.providers.registry import UnknownModel, model_config, resolve_model
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
    ("value", "base_url", "port"),
    [
        ("gpu-box:11500", "http://gpu-box:11500", 11500),
        ("gpu-box", "http://gpu-box:11434", 11434),
        ("0.0.0.0", "http://0.0.0.0:11434", 11434),
        (":11500", "http://localhost:11500", 11500),
        ("[::1]", "http://[::1]:11434", 11434),
        ("::1", "http://[::1]:11434", 11434),
        ("[::1]:11500", "http://[::1]:11500", 11500),
        ("gpu-box/ollama", "http://gpu-box:11434/ollama", 11434),
        ("'gpu-box'", "http://gpu-box:11434", 11434),
        ("http://gpu-box:11500", "http://gpu-box:11500", 11500),
        # A scheme means a URL, and a URL without a port has its scheme's, as Ollama's own
        # clients read it (ollama-python `_parse_host`, ollama `envconfig.Host`).
        ("http://gpu-box", "http://gpu-box", 80),
        ("https://gpu-box", "https://gpu-box", 443),
        ("", "http://localhost:11434", 11434),
        ("  ", "http://localhost:11434", 11434),
    ],
)
def test_ollama_host_is_read_as_ollama_reads_it(
    tmp_path: Path, value: str, base_url: str, port: int
) -> None:
    import httpx

    config = model_config("ollama/qwen3-coder", env(tmp_path, OLLAMA_HOST=value))
    assert config.base_url == base_url
    url = httpx.URL(base_url)
    assert (url.port or {"http": 80, "https": 443}[url.scheme]) == port


def test_the_readme_names_every_endpoint_variable_and_only_those() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    models = readme.split("### Models", 1)[1].split("\n### ", 1)[0]
    read = {e.base_url_env for e in credentials.ENDPOINTS.values()}
    assert None not in read, "every provider can be pointed elsewhere"
    assert set(re.findall(r"`([A-Z_]+_BASE_URL|OLLAMA_HOST)`", models)) == read


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
    def __init__(self, name: str, *, after_output: bool = False, retryable: bool = True) -> None:
        self.name, self.after_output, self.calls = name, after_output, 0
        self.retryable = retryable

    async def stream(self, request: ModelRequest):
        self.calls += 1
        if self.after_output:
            yield TextPart("partial")
        raise ProviderError(f"{self.name} is down", retryable=self.retryable)


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


async def test_the_routers_error_is_retryable_only_if_one_of_its_models_was() -> None:
    router = FallbackProvider([Failing("a", retryable=False), Failing("b", retryable=False)])
    with pytest.raises(ProviderError) as raised:
        [d async for d in router.stream(REQUEST)]
    assert raised.value.retryable is False
    router = FallbackProvider([Failing("a", retryable=False), Failing("b")])
    with pytest.raises(ProviderError) as raised:
        [d async for d in router.stream(REQUEST)]
    assert raised.value.retryable is True


def test_the_router_describes_what_every_one_of_its_models_accepts() -> None:
    from moot.providers.anthropic import AnthropicProvider
    from moot.providers.base import model_info
    from moot.providers.config import ProviderConfig

    def adapter(model: str) -> AnthropicProvider:
        return AnthropicProvider(ProviderConfig("anthropic", model, "http://x"))

    # claude-haiku-4-5: images, 200,000 tokens in, 64,000 out; an unknown model: no images,
    # 32,768 in, 4,096 out. A scripted model bounds nothing.
    router = FallbackProvider([adapter("claude-haiku-4-5"), adapter("no-such-model")])
    info = model_info(router)
    assert info is not None
    assert (info.images, info.context_window, info.max_output) == (False, 32_768, 4_096)
    vision = FallbackProvider([ScriptedProvider([]), adapter("claude-haiku-4-5")])
    info = model_info(vision)
    assert info is not None
    assert (info.images, info.context_window, info.max_output) == (True, 200_000, 64_000)
    assert model_info(FallbackProvider([ScriptedProvider([]), ScriptedProvider([])])) is None
    nested = model_info(FallbackProvider([adapter("claude-sonnet-4-5"), router]))
    assert nested is not None
    assert (nested.images, nested.context_window, nested.max_output) == (False, 32_768, 4_096)


def test_images_are_replaced_by_a_note_for_text_only_models() -> None:
    from moot.protocol.messages import Attachment, ToolResultMessage, without_images
    from moot.providers.anthropic import AnthropicProvider
    from moot.providers.base import model_info
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
    assert (model_info(text_only).images, model_info(vision).images) == (False, True)
    assert model_info(ScriptedProvider([])) is None  # takes anything


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
    haiku = catalog.lookup("anthropic/claude-haiku-4-5")
    assert (haiku.context_window, haiku.max_output, haiku.input) == (1000, 64000, 1.0)
    assert catalog.lookup("anthropic/claude-sonnet-4-5").context_window == 200000


def test_a_bad_catalog_entry_names_the_file_and_the_model(tmp_path: Path, monkeypatch) -> None:
    from moot.providers import catalog

    monkeypatch.setenv("MOOT_HOME", str(tmp_path))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "models.json").write_text('{"a/b": {"context_windw": 1}}')
    with pytest.raises(ValueError, match=r"models.json: model a/b: .*context_windw"):
        catalog.lookup("a/b")


@pytest.mark.parametrize(
    ("name", "same_as"),
    [
        ("openai-chat/gpt-4.1", "openai/gpt-4.1"),
        ("openai-chat/gpt-5-2025-08-07", "openai/gpt-5"),
        ("openrouter/openai/gpt-5-mini", "openai/gpt-5-mini"),
        ("openrouter/anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4-5"),
        ("openrouter/anthropic/claude-opus-4.1", "anthropic/claude-opus-4-1"),
        ("openrouter/google/gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ("openrouter/x-ai/grok-code-fast-1", "xai/grok-code-fast-1"),
        ("openrouter/mistralai/devstral-medium", "mistral/devstral-medium"),
        ("openrouter/mistralai/devstral-medium-2507", "mistral/devstral-medium"),
        ("gemini/models/gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ("gemini/models/gemini-2.5-flash-001", "gemini/gemini-2.5-flash"),
        ("openrouter/deepseek/deepseek-chat", "deepseek/deepseek-chat"),
    ],
)
def test_a_model_served_by_another_provider_is_looked_up_as_its_makers(
    name: str, same_as: str
) -> None:
    from moot.providers.catalog import lookup

    info, maker = lookup(name), lookup(same_as)
    assert maker.known
    assert msgspec.structs.replace(info, name=same_as) == maker
    assert info.name == name


@pytest.mark.parametrize(
    "name",
    [
        "openai-chat/nosuch-model",
        "openrouter/qwen/qwen3-coder",
        "openrouter/gpt-4.1",  # not vendor/model: OpenRouter has no such name
        "openrouter/deepseek/deepseek-chat:free",  # another price than DeepSeek's own
        "ollama/gpt-4.1",  # a local model of that name is not OpenAI's
        "groq/openai/gpt-5",
        # Other models of a listed one's family, not versions of it (a prefix is no match).
        "openai/gpt-5-pro",
        "openai/gpt-5-chat-latest",
        "openai/o3-deep-research",
        "gemini/gemini-2.5-flash-image-preview",
        "gemini/gemini-2.5-flash-preview-tts",
        # `models/` is Gemini's resource prefix only.
        "openai/models/gpt-5",
        "openrouter/google/models/gemini-2.5-pro",
    ],
)
def test_other_models_keep_the_conservative_defaults(name: str) -> None:
    from moot.providers.catalog import ModelInfo, lookup

    assert lookup(name) == ModelInfo(name=name)
    assert (lookup(name).context_window, lookup(name).max_output) == (32_768, 4_096)
    assert not lookup(name).images and lookup(name).input is None


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("anthropic/claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-20250514", "anthropic/claude-sonnet-4"),
        ("anthropic/claude-opus-4-1@20250805", "anthropic/claude-opus-4-1"),
        ("anthropic/claude-3-7-sonnet-latest", "anthropic/claude-3-7-sonnet"),
        ("openai/gpt-4.1-mini-2025-04-14", "openai/gpt-4.1-mini"),
        ("openai-chat/gpt-5-nano-2025-08-07", "openai/gpt-5-nano"),
        ("gemini/gemini-2.5-pro-preview-06-05", "gemini/gemini-2.5-pro"),
        ("gemini/gemini-2.5-flash-preview-09-2025", "gemini/gemini-2.5-flash"),
        ("openrouter/google/gemini-2.5-flash-lite-preview-06-17", "gemini/gemini-2.5-flash-lite"),
        ("mistral/devstral-medium-2507", "mistral/devstral-medium"),
        ("mistral/devstral-medium-latest", "mistral/devstral-medium"),
    ],
)
def test_a_dated_or_versioned_name_is_its_models_entry(name: str, entry: str) -> None:
    from moot.providers.catalog import lookup

    assert lookup(entry).known
    assert lookup(name) == msgspec.structs.replace(lookup(entry), name=name)


@pytest.mark.parametrize(
    ("name", "price", "not_as"),
    [
        ("openai/gpt-4.1-mini", 0.4, "openai/gpt-4.1"),
        ("openai/gpt-4.1-nano", 0.1, "openai/gpt-4.1"),
        ("openai/gpt-5-nano", 0.05, "openai/gpt-5"),
        ("openai/o3-mini", 1.1, "openai/o3"),
        ("gemini/gemini-2.5-flash-lite", 0.1, "gemini/gemini-2.5-flash"),
    ],
)
def test_a_smaller_sibling_has_its_own_price(name: str, price: float, not_as: str) -> None:
    from moot.providers.catalog import lookup

    assert (lookup(name).known, lookup(name).input) == (True, price)
    assert lookup(not_as).input != price


def test_only_a_version_suffix_reaches_an_entry() -> None:
    from moot.providers.catalog import CatalogEntry, ModelInfo, lookup

    extra = {"acme/coder": CatalogEntry(context_window=99_000, input=1.0, output=2.0)}
    for version in ("-2025-04-14", "-20250514", "@20250514", "-latest", "-001", "-0709",
                    "-preview-05-20", "-preview-09-2025"):  # fmt: skip
        info = lookup(f"acme/coder{version}", extra)
        assert (info.known, info.input, info.context_window) == (True, 1.0, 99_000), version
    for other in ("-mini", "-nano", "-lite", "-pro", "-1", "-v2", "-chat-latest",
                  "-preview", "-image-preview", "-preview-tts", "-12345", "-20250514-v1:0",
                  "x", "-mini-2025-04-14"):  # fmt: skip
        name = f"acme/coder{other}"
        assert lookup(name, extra) == ModelInfo(name=name), other


def test_no_catalog_key_ends_in_a_version_suffix() -> None:
    """A key with a suffix would be reached by that one name only: `mistral/devstral-medium-2507`
    is looked up as `mistral/devstral-medium`, so that is the key."""
    from moot.providers import catalog

    path = Path(catalog.__file__).with_name("models.json")
    names = [n for n in json.loads(path.read_text(encoding="utf-8")) if not n.startswith("_")]
    assert names
    assert [n for n in names if catalog.VERSION_SUFFIX.search(n)] == []


def test_a_catalog_that_cannot_be_read_is_an_unknown_model_naming_the_file(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path))  # the user catalog's place comes from here
    (tmp_path / "config").mkdir()
    path = tmp_path / "config" / "models.json"
    values = env(tmp_path, OLLAMA_HOST="127.0.0.1:9")
    for content in ("{not json", "[]", '{"ollama/q": {"context_window": "big"}}'):
        path.write_text(content)
        with pytest.raises(UnknownModel, match=re.escape(str(path))):
            model_config("ollama/q", values)
        with pytest.raises(UnknownModel, match=re.escape(str(path))):
            resolve_model("ollama/p,ollama/q", values)  # a router's models too
    path.unlink()
    bad: dict = {"ollama/q": {"context_window": 0}}  # not checked as settings are
    with pytest.raises(UnknownModel, match=r"settings' models: model ollama/q: .*>= 1"):
        model_config("ollama/q", values, models=bad)
    assert model_config("ollama/q", values, models={"ollama/q": {"context_window": 9}}).info.known


SETTINGS_MODELS = {
    # A model the catalog does not list, and one field of a listed one (reached through the
    # openai-chat/ name, so the rest of its entry stays OpenAI's).
    "ollama/qwen3-coder": {"context_window": 262144, "max_output": 8192, "images": True},
    "openai-chat/gpt-4.1": {"max_output": 1000},
}


def test_settings_models_reach_model_resolution(tmp_path: Path) -> None:
    from moot.providers.catalog import CatalogEntry

    models = {name: CatalogEntry(**entry) for name, entry in SETTINGS_MODELS.items()}
    values = env(tmp_path, OPENAI_API_KEY="k")
    qwen = model_config("ollama/qwen3-coder", values, models=models).info
    assert (qwen.context_window, qwen.max_output, qwen.images, qwen.known) == (
        262144,
        8192,
        True,
        True,
    )
    gpt = model_config("openai-chat/gpt-4.1", values, models=models).info
    assert (gpt.max_output, gpt.context_window, gpt.images, gpt.input) == (1000, 1047576, True, 2.0)
    assert model_config("openai-chat/gpt-4.1", values).info.max_output == 32768  # no settings
    router = resolve_model("ollama/qwen3-coder,openai-chat/gpt-4.1", values, models=models)
    assert isinstance(router, FallbackProvider)
    assert [p.config.info.max_output for p in router.providers] == [8192, 1000]


async def test_a_settings_file_models_key_shapes_the_request(tmp_path: Path) -> None:
    from moot.settings import load_settings

    home, project = tmp_path / "home", tmp_path / "project"
    (home / "config").mkdir(parents=True)
    (project / ".moot").mkdir(parents=True)
    (home / "config" / "settings.json").write_text(json.dumps({"models": SETTINGS_MODELS}))
    # The project's file changes one field of one model; the user's other fields stay.
    (project / ".moot" / "settings.json").write_text(
        json.dumps({"models": {"ollama/qwen3-coder": {"max_output": 2048}}})
    )
    from moot.settings import approve_held

    held = load_settings(project, {"MOOT_HOME": str(home)})
    assert held.models["ollama/qwen3-coder"].max_output != 2048  # a repository's: held
    approve_held(project, {"MOOT_HOME": str(home)})
    settings = load_settings(project, {"MOOT_HOME": str(home)})
    assert settings.models["ollama/qwen3-coder"].context_window == 262144
    with ModelServer() as server:
        values = env(home, OLLAMA_HOST=server.url)
        provider = resolve_model("ollama/qwen3-coder", values, models=settings.models)
        server.reply(Reply(body=sse_fixture("openai_chat", "no_done_after_finish")))
        try:
            [d async for d in provider.stream(REQUEST)]
        finally:
            await provider.aclose()
    assert server.requests[0].json["max_tokens"] == 2048


def test_a_settings_models_entry_that_does_not_fit_names_its_key_path(tmp_path: Path) -> None:
    from moot.settings import SettingsError, load_settings

    (tmp_path / ".moot").mkdir()
    path = tmp_path / ".moot" / "settings.json"
    path.write_text(json.dumps({"models": {"a/b": {"context_windw": 1}}}))
    with pytest.raises(
        SettingsError, match=r"models\.a/b\.context_windw: not a known key \(it takes"
    ):
        load_settings(tmp_path, {"MOOT_HOME": str(tmp_path / "home")})
    path.write_text(json.dumps({"models": {"a/b": {}, "c/d": {"input": "cheap"}}}))
    with pytest.raises(SettingsError, match=r"models\.c/d\.input: Expected `float"):
        load_settings(tmp_path, {"MOOT_HOME": str(tmp_path / "home")})
    path.write_text(json.dumps({"models": {"a/b": {"context_window": 0}}}))
    with pytest.raises(SettingsError, match=r"models\.a/b\.context_window: Expected `int` >= 1"):
        load_settings(tmp_path, {"MOOT_HOME": str(tmp_path / "home")})
