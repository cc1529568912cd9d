"""OpenAI-compatible servers as data: where each one lives, its key, and its dialect.

Every preset is a configuration of the one Chat Completions adapter (`openai_chat.py`), not an
adapter of its own. The registry turns a preset and the environment into a `ProviderConfig`;
the adapter reads the dialect fields (`max_tokens_field`, `stream_usage`) by provider name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

import msgspec


class Preset(msgspec.Struct, frozen=True):
    """One OpenAI-compatible server."""

    name: str
    """The provider name, as in `name/model`."""
    base_url: str
    """The default base URL; the adapter appends `/v1` when it ends in no `/v<n>` segment."""
    key_env: str | None
    """The environment variable holding the API key; None for servers that take no key."""
    base_url_env: str | None = None
    """The environment variable that overrides `base_url` (`OPENAI_BASE_URL`, `OLLAMA_HOST`).
    Its value may end in `/v1` or not: the adapter adds the version segment when it is missing."""
    default_port: int | None = None
    """For a variable that names a host rather than a URL (`OLLAMA_HOST`): the port a value
    without a scheme and a port gets. A value with a scheme keeps that scheme's own port, as the
    server's own clients read it."""
    headers: Mapping[str, str] = {}
    """Extra headers every request to this server carries."""
    key_optional: bool = False
    """True when the server works without a key even though it accepts one (vLLM started
    without `--api-key`)."""
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    """The body field for the output cap. OpenAI deprecated `max_tokens`, but Mistral rejects
    `max_completion_tokens` (HTTP 422) and Ollama and LM Studio ignore it."""
    stream_usage: bool = True
    """Whether to send `stream_options: {"include_usage": true}`. Mistral rejects the field
    (HTTP 422) and reports usage on its last chunk anyway."""
    host_path: str = ""
    """The path a `base_url_env` value naming only a host gets: Groq's SDK takes
    `GROQ_BASE_URL=https://api.groq.com` and appends `/openai/v1` itself
    (https://github.com/groq/groq-python), so the same value must work here."""
    output_cap: int | None = None
    """The most output tokens a request asks for (the catalog's cap when that is lower).
    OpenRouter reserves credit for the whole `max_tokens` of a request before it runs, so the
    maker's own cap its models are looked up by (64,000 or 128,000) gets HTTP 402 on a small
    balance. A settings `models` entry with a `max_output` for the exact name wins over this."""

    def resolve_base_url(self, environ: Mapping[str, str]) -> str:
        """The base URL from `base_url_env` when set, else the default.

        `OLLAMA_HOST` (a preset with a `default_port`) is read as Ollama's own clients read it:
        a value without a scheme is `http://` and, naming no port, that port: `gpu-box` and
        `0.0.0.0` are port 11434, while `http://gpu-box` is port 80
        (https://github.com/ollama/ollama-python, `_parse_host`). Any other value without a
        scheme gets one from `with_scheme`: `https://` unless its host is loopback. A value
        naming only a host gets the preset's `host_path`.
        """
        raw = environ.get(self.base_url_env, "") if self.base_url_env else ""
        value = raw.strip().strip("\"'").strip()  # Ollama trims quotes too
        if not value:
            return self.base_url
        if "://" not in value and self.default_port is not None:
            return f"http://{_with_port(value, self.default_port)}"
        url = with_scheme(value)
        if self.host_path and urlsplit(url).path in ("", "/"):
            url = url.rstrip("/") + self.host_path
        return url


def with_scheme(value: str) -> str:
    """`value` as a URL: as given when it has a scheme; else `http://` for a loopback host
    (`localhost`, `127.0.0.1`, `::1`: a server on this machine) and `https://` for any other.

    A key must never cross the network in cleartext because a scheme was left out
    (`OPENROUTER_BASE_URL=openrouter.ai/api/v1`); a plain-HTTP server on another machine says so
    with `http://`.
    """
    if not value or "://" in value:
        return value
    return f"{'http' if _is_loopback(value) else 'https'}://{value}"


def _is_loopback(value: str) -> bool:
    """Whether the host of `[user@]host[:port][/path]` is this machine."""
    host = value.partition("/")[0].rpartition("@")[2]
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _with_port(value: str, port: int) -> str:
    """`host[:port][/path]` with `port` when it names none (`[::1]` and `::1` are hosts)."""
    host, slash, path = value.partition("/")
    if host.startswith("["):
        named = "]:" in host
    elif host.count(":") > 1:  # a bare IPv6 address
        host, named = f"[{host}]", False
    else:
        named = ":" in host
        if not host or host.startswith(":"):
            host = "localhost" + host
    return f"{host}{'' if named else f':{port}'}{slash}{path}"


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        Preset(
            "ollama",
            "http://localhost:11434",
            None,
            "OLLAMA_HOST",
            default_port=11434,
            max_tokens_field="max_tokens",
        ),
        Preset(
            "lmstudio",
            "http://localhost:1234/v1",
            None,
            "LMSTUDIO_BASE_URL",
            max_tokens_field="max_tokens",
        ),
        Preset(
            "vllm",
            "http://localhost:8000/v1",
            "VLLM_API_KEY",
            "VLLM_BASE_URL",
            key_optional=True,
        ),
        Preset(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            "OPENROUTER_BASE_URL",
            # OpenRouter's optional app attribution (https://openrouter.ai/docs/api-reference/overview).
            headers={"X-Title": "moot"},
            # 32,768: room for a reasoning model's thinking plus a large file written in one
            # answer (Claude Code's own default cap is 32,000), while the credit reserved per
            # request is half of Claude Sonnet's 64,000 and a quarter of GPT-5's 128,000.
            output_cap=32_768,
        ),
        Preset(
            "groq",
            "https://api.groq.com/openai/v1",
            "GROQ_API_KEY",
            "GROQ_BASE_URL",
            host_path="/openai/v1",
        ),
        Preset(
            "deepseek",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
            "DEEPSEEK_BASE_URL",
            max_tokens_field="max_tokens",
        ),
        Preset(
            "mistral",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
            "MISTRAL_BASE_URL",
            max_tokens_field="max_tokens",
            stream_usage=False,
        ),
        Preset("xai", "https://api.x.ai/v1", "XAI_API_KEY", "XAI_BASE_URL"),
        Preset(
            "together",
            "https://api.together.xyz/v1",
            "TOGETHER_API_KEY",
            "TOGETHER_BASE_URL",
            max_tokens_field="max_tokens",
        ),
        Preset("cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY", "CEREBRAS_BASE_URL"),
    )
}
"""OpenAI-compatible presets by provider name."""
