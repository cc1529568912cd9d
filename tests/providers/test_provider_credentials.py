"""Keys and base URLs as the environment gives them: trimmed, checked, never leaked, never
sent in cleartext because a scheme was left out."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_server import ModelServer, Reply, sse_fixture
from moot.protocol.messages import UserMessage
from moot.providers import credentials
from moot.providers.base import Finish, ModelRequest, Provider, ProviderError
from moot.providers.catalog import CatalogEntry
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.http import redact
from moot.providers.registry import UnknownModel, resolve_model

KEY = "sk-ant-api03-AAAAbbbbCCCCddddEEEEffffGGGGhhhh1234"
ASK = ModelRequest(model="x", system="", messages=(UserMessage(content="hi"),))


async def play(provider: Provider) -> list[object]:
    try:
        return [delta async for delta in provider.stream(ASK)]
    finally:
        await provider.aclose()  # type: ignore[attr-defined]


def pieces(key: str, size: int = 6) -> set[str]:
    """Every run of `size` characters of `key`: none may show in a message."""
    return {key[i : i + size] for i in range(len(key) - size + 1)}


# --- keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize("padding", ["\n", "\r\n", "\t", "  ", " \n"])
async def test_a_key_with_surrounding_whitespace_is_sent_without_it(
    server: ModelServer, tmp_path: Path, padding: str
) -> None:
    """A key from a file (`echo key > file`, a Kubernetes secret) ends in a newline."""
    environ = {
        "MOOT_HOME": str(tmp_path),
        "ANTHROPIC_API_KEY": KEY + padding,
        "ANTHROPIC_BASE_URL": server.url,
        "OPENROUTER_API_KEY": padding + KEY + padding,
        "OPENROUTER_BASE_URL": server.url,
    }
    server.reply(
        Reply(body=sse_fixture("anthropic", "text")),
        Reply(body=sse_fixture("openai_chat", "text")),
    )
    assert (await play(resolve_model("anthropic/claude-haiku-4-5", environ)))[-1] == Finish(
        "end_turn"
    )
    assert (await play(resolve_model("openrouter/openai/gpt-4.1", environ)))[-1] == Finish("stop")
    anthropic, openrouter = server.requests
    assert anthropic.headers["x-api-key"] == KEY
    assert openrouter.headers["authorization"] == f"Bearer {KEY}"


def test_a_saved_key_with_a_trailing_newline_is_trimmed(tmp_path: Path) -> None:
    environ = {"MOOT_HOME": str(tmp_path)}
    credentials.save_key("anthropic", KEY + "\n", environ)
    key, source = credentials.find_key("anthropic", environ)
    assert (key, source.source) == (KEY, "key file")


def test_a_blank_variable_counts_as_unset(tmp_path: Path) -> None:
    environ = {"MOOT_HOME": str(tmp_path), "GEMINI_API_KEY": " \n", "GOOGLE_API_KEY": KEY}
    key, source = credentials.find_key("gemini", environ)
    assert (key, source.source) == (KEY, "GOOGLE_API_KEY")


@pytest.mark.parametrize(
    "bad",
    [KEY[:20] + "\n" + KEY[20:], KEY[:20] + "\x00" + KEY[20:], "sk-ant-é" + KEY, KEY + "\x7f"],
)
def test_a_key_with_a_control_or_non_ascii_character_is_refused_before_any_request(
    server: ModelServer, tmp_path: Path, bad: str
) -> None:
    environ = {
        "MOOT_HOME": str(tmp_path),
        "ANTHROPIC_API_KEY": bad,
        "ANTHROPIC_BASE_URL": server.url,
    }
    with pytest.raises(UnknownModel) as caught:
        resolve_model("anthropic/claude-haiku-4-5", environ)
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message and "control or non-ASCII" in message
    assert not any(piece in message for piece in pieces(KEY))
    assert server.requests == []


def test_a_bad_saved_key_is_refused_naming_the_key_file(tmp_path: Path) -> None:
    environ = {"MOOT_HOME": str(tmp_path)}
    path = credentials.save_key("openrouter", KEY[:10] + "\t" + KEY[10:], environ)
    with pytest.raises(UnknownModel) as caught:
        resolve_model("openrouter/openai/gpt-4.1", environ)
    message = str(caught.value)
    assert str(path) in message and "openrouter" in message
    assert not any(piece in message for piece in pieces(KEY))


def test_an_unreadable_key_file_is_a_usage_error(tmp_path: Path) -> None:
    environ = {"MOOT_HOME": str(tmp_path)}
    credentials.key_file(environ).parent.mkdir(parents=True, exist_ok=True)
    credentials.key_file(environ).write_text("{not json")
    with pytest.raises(UnknownModel, match="cannot read the key file"):
        resolve_model("anthropic/claude-haiku-4-5", environ)


@pytest.mark.parametrize("bad", [KEY + "\n", KEY[:20] + "\r\n" + KEY[20:], "sk-ant-é" + KEY])
async def test_a_key_http_cannot_carry_fails_once_without_quoting_it(
    server: ModelServer, bad: str
) -> None:
    """A key given straight to a `ProviderConfig` (the Python API) skips the checks above:
    the transport refuses it itself, once, in words of its own (httpx's quote the header)."""
    from moot.providers.anthropic import AnthropicProvider

    config = ProviderConfig(
        "anthropic", "claude-haiku-4-5", base_url=server.url, api_key=bad, retry=RetryPolicy()
    )
    with pytest.raises(ProviderError) as caught:
        await play(AnthropicProvider(config))
    error = caught.value
    assert error.retryable is False
    assert "cannot send the request" in str(error)
    assert not any(piece in str(error) for piece in pieces(KEY))
    assert server.requests == []


def test_redact_blanks_the_key_as_messages_quote_it() -> None:
    key = KEY + "\n"
    config = ProviderConfig("anthropic", "m", base_url="https://x", api_key=key)
    messages = [
        f"Illegal header value b'Bearer {KEY}\\n'",  # h11, via httpx
        f"value {key!r}",
        f"value {key.encode('unicode_escape').decode()}",
        f"the key {KEY} without its newline",
        f"half of it: {KEY[: len(KEY) // 2]}",
    ]
    for message in messages:
        assert not any(piece in redact(message, config) for piece in pieces(KEY, 8)), message
    accented = ProviderConfig("openai", "m", base_url="https://x", api_key="sk-é" + KEY)
    quoted = f"b'Bearer {('sk-é' + KEY).encode()!r}'"
    assert not any(piece in redact(quoted, accented) for piece in pieces(KEY, 8))


# --- base URLs -----------------------------------------------------------------------------

BASE_URL_VARIABLES = {
    name: endpoint.base_url_env
    for name, endpoint in credentials.ENDPOINTS.items()
    if endpoint.base_url_env and name != "ollama"
}


@pytest.mark.parametrize(("name", "variable"), sorted(BASE_URL_VARIABLES.items()))
def test_a_base_url_without_a_scheme_is_https_unless_it_is_loopback(
    name: str, variable: str
) -> None:
    def resolved(value: str) -> str:
        return credentials.base_url(name, {variable: value})

    assert resolved("gw.example.com/api/v1") == "https://gw.example.com/api/v1"
    assert resolved("10.0.0.7:8000/v1") == "https://10.0.0.7:8000/v1"
    assert resolved("u:pw@127.0.0.1.example.com/v1") == "https://u:pw@127.0.0.1.example.com/v1"
    assert resolved("127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert resolved("localhost:8000/v1") == "http://localhost:8000/v1"
    assert resolved("[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert resolved(" http://gpu-box:8000/v1 ") == "http://gpu-box:8000/v1"  # a scheme stays


def test_ollama_host_keeps_ollamas_convention() -> None:
    assert credentials.base_url("ollama", {"OLLAMA_HOST": "gpu-box"}) == "http://gpu-box:11434"


async def test_a_loopback_base_url_without_a_scheme_reaches_the_server(
    server: ModelServer, tmp_path: Path
) -> None:
    environ = {
        "MOOT_HOME": str(tmp_path),
        "OPENROUTER_API_KEY": KEY,
        "OPENROUTER_BASE_URL": f"127.0.0.1:{server.port}/api/v1",
    }
    server.reply(Reply(body=sse_fixture("openai_chat", "text")))
    await play(resolve_model("openrouter/openai/gpt-4.1", environ))
    assert [r.path for r in server.requests] == ["/api/v1/chat/completions"]


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("https://api.groq.com", "https://api.groq.com/openai/v1/chat/completions"),
        ("https://api.groq.com/", "https://api.groq.com/openai/v1/chat/completions"),
        ("api.groq.com", "https://api.groq.com/openai/v1/chat/completions"),
        ("https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1/chat/completions"),
        ("https://gw.example.com/groq", "https://gw.example.com/groq/v1/chat/completions"),
    ],
)
def test_groq_base_url_in_the_sdks_form_gets_the_sdks_path(value: str, url: str) -> None:
    provider = resolve_model(
        "groq/llama-3.3-70b-versatile", {"GROQ_API_KEY": KEY, "GROQ_BASE_URL": value}
    )
    assert provider.build_request(ASK)[0] == url  # type: ignore[attr-defined]


# --- OpenRouter's output cap ---------------------------------------------------------------


async def test_openrouter_asks_for_at_most_its_default_output_cap(
    server: ModelServer, tmp_path: Path
) -> None:
    """OpenRouter reserves credit for the whole cap: the maker's 64,000 or 128,000 would get
    HTTP 402 on a small balance."""
    environ = {"MOOT_HOME": str(tmp_path), "OPENROUTER_API_KEY": KEY}
    environ["OPENROUTER_BASE_URL"] = server.url
    server.reply(*[Reply(body=sse_fixture("openai_chat", "text"))] * 2)
    await play(resolve_model("openrouter/anthropic/claude-sonnet-4.5", environ))
    await play(resolve_model("openrouter/openai/gpt-5", environ))
    sonnet, gpt5 = server.requests
    assert sonnet.json["max_completion_tokens"] == 32_768
    assert gpt5.json["max_completion_tokens"] == 32_768


def test_openrouter_output_cap_is_a_ceiling_and_settings_lift_it(tmp_path: Path) -> None:
    environ = {"MOOT_HOME": str(tmp_path), "OPENROUTER_API_KEY": KEY, "OPENAI_API_KEY": KEY}
    models = {
        "openrouter/openai/gpt-5": CatalogEntry(max_output=100_000),
        "anthropic/claude-sonnet-4-5": CatalogEntry(max_output=8_000),
    }

    def cap(spec: str) -> int:
        provider = resolve_model(spec, environ, models=models)
        body = provider.build_request(ASK)[2]  # type: ignore[attr-defined]
        return body["max_completion_tokens"]

    assert cap("openrouter/openai/gpt-5") == 100_000  # its own settings entry wins
    assert cap("openrouter/anthropic/claude-sonnet-4.5") == 8_000  # below the cap: kept
    assert cap("openai-chat/gpt-5") == 128_000  # other providers: no cap
