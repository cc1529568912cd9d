"""Model names to providers.

`scripted:<file>` plays a script; `provider/model` (e.g. `anthropic/claude-sonnet-4-5`,
`openai/gpt-5`, `ollama/qwen3-coder`) builds the adapter for that provider's wire API; a comma
separated list (`anthropic/claude-sonnet-4-5,openai/gpt-5`) is a fallback router over them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from moot.providers.base import Provider, UnknownModel
from moot.providers.config import ProviderConfig

if TYPE_CHECKING:
    from moot.providers.catalog import CatalogEntry


def resolve_model(
    spec: str,
    environ: Mapping[str, str] | None = None,
    *,
    models: Mapping[str, CatalogEntry] | None = None,
) -> Provider:
    """The provider for a model name.

    Args:
        spec: `provider/model`, `scripted:<file>`, or a comma-separated fallback list of them.
        environ: Where keys and endpoints come from; `os.environ` when None.
        models: Catalog entries from the settings' `models` key, over the built-in catalog.

    Raises:
        UnknownModel: when no provider serves `spec` or its key is missing.
    """
    spec = spec.strip()
    if "," in spec:
        from moot.providers.router import FallbackProvider

        parts = spec.split(",")
        return FallbackProvider([resolve_model(p, environ, models=models) for p in parts])
    kind, colon, rest = spec.partition(":")
    if kind == "scripted" and colon:
        from moot.providers.scripted import ScriptedProvider

        try:
            return ScriptedProvider.from_file(rest)
        except ValueError as exc:
            raise UnknownModel(str(exc)) from exc
    return adapter_for(model_config(spec, environ, models=models))


def model_config(
    spec: str,
    environ: Mapping[str, str] | None = None,
    *,
    models: Mapping[str, CatalogEntry] | None = None,
) -> ProviderConfig:
    """Endpoint, key and timeouts for `provider/model`, from the environment and key file;
    `models` (the settings' catalog entries) go with it to every catalog lookup.

    The model's catalog entry is looked up here once, so that a malformed user `models.json`
    or settings entry stops the caller before it starts anything (`moot -p` before any session).

    Raises:
        UnknownModel: for a bad name or provider, a missing key, a bad timeout or a catalog
            that cannot be read (the message names the file).
    """
    from moot.providers import credentials

    provider, slash, model = spec.partition("/")
    if not slash or not model:
        raise UnknownModel(f"model {spec!r} should look like provider/model or scripted:<file>")
    if provider not in credentials.ENDPOINTS:
        known = ", ".join(sorted(credentials.ENDPOINTS))
        raise UnknownModel(f"unknown provider {provider!r} in {spec!r}; known: {known}")
    env = os.environ if environ is None else environ
    key, _ = credentials.find_key(provider, environ)
    endpoint = credentials.ENDPOINTS[provider]
    if key is None and endpoint.key_env and provider not in credentials.KEYLESS_OPTIONAL:
        raise UnknownModel(
            f"no API key for {provider}: set {' or '.join(endpoint.key_env)} "
            f"(or save one with `moot login {provider}`)"
        )
    config = ProviderConfig(
        provider=provider,
        model=model,
        base_url=credentials.base_url(provider, environ),
        api_key=key,
        headers=credentials.headers(provider),
        connect_timeout=_seconds(env, "MOOT_CONNECT_TIMEOUT", 10.0),
        read_timeout=_seconds(env, "MOOT_READ_TIMEOUT", 120.0),
        reasoning_effort=env.get("MOOT_REASONING_EFFORT") or None,
        catalog=dict(models or {}),
    )
    try:
        config.info  # noqa: B018 - a malformed catalog is a usage error now, not a failed run later
    except ValueError as exc:
        raise UnknownModel(str(exc)) from None
    return config


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = env.get(name)
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise UnknownModel(f"{name}={value!r} is not a number of seconds") from None
    if seconds <= 0:
        raise UnknownModel(f"{name} must be positive")
    return seconds


def adapter_for(config: ProviderConfig) -> Provider:
    """The adapter of the wire API that `config`'s provider speaks."""
    # Each adapter imports httpx; only the one in use is imported (start-up time matters).
    from moot.providers.credentials import ENDPOINTS

    api = ENDPOINTS[config.provider].api
    if api == "anthropic":
        from moot.providers.anthropic import AnthropicProvider

        return AnthropicProvider(config)
    if api == "openai_responses":
        from moot.providers.openai_responses import OpenAIResponsesProvider

        return OpenAIResponsesProvider(config)
    if api == "gemini":
        from moot.providers.gemini import GeminiProvider

        return GeminiProvider(config)
    from moot.providers.openai_chat import OpenAIChatProvider

    return OpenAIChatProvider(config)
