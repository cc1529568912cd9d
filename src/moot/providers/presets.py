"""OpenAI-compatible servers as data: where each one lives, its key, and its dialect.

Every preset is a configuration of the one Chat Completions adapter (`openai_chat.py`), not an
adapter of its own. The registry turns a preset and the environment into a `ProviderConfig`;
the adapter reads the dialect fields (`max_tokens_field`, `stream_usage`) by provider name.
"""

from __future__ import annotations

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
    """An environment variable that overrides `base_url` (`OPENAI_BASE_URL`, `OLLAMA_HOST`)."""
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

    def resolve_base_url(self, environ: Mapping[str, str]) -> str:
        """The base URL from `base_url_env` when set, else the default.

        A bare `host:port` (how people write `OLLAMA_HOST`) gets an `http://` scheme.
        """
        value = environ.get(self.base_url_env, "").strip() if self.base_url_env else ""
        if not value:
            return self.base_url
        return value if urlsplit(value).scheme in ("http", "https") else f"http://{value}"


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        Preset(
            "ollama",
            "http://localhost:11434",
            None,
            "OLLAMA_HOST",
            max_tokens_field="max_tokens",
        ),
        Preset("lmstudio", "http://localhost:1234/v1", None, max_tokens_field="max_tokens"),
        Preset("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", key_optional=True),
        Preset(
            "openrouter",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            # OpenRouter's optional app attribution (https://openrouter.ai/docs/api-reference/overview).
            headers={"X-Title": "moot"},
        ),
        Preset("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
        Preset(
            "deepseek",
            "https://api.deepseek.com/v1",
            "DEEPSEEK_API_KEY",
            max_tokens_field="max_tokens",
        ),
        Preset(
            "mistral",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
            max_tokens_field="max_tokens",
            stream_usage=False,
        ),
        Preset("xai", "https://api.x.ai/v1", "XAI_API_KEY"),
        Preset(
            "together",
            "https://api.together.xyz/v1",
            "TOGETHER_API_KEY",
            max_tokens_field="max_tokens",
        ),
        Preset("cerebras", "https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
    )
}
"""OpenAI-compatible presets by provider name."""
