"""One tiny real request to a provider: `moot doctor --check`, and a key checked before it is
saved (`moot login`, `/model` taking a key).

The request asks a cheap model for one word (a fraction of a cent), once, without retries: a
probe reports faults, it does not retry them away.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

if TYPE_CHECKING:
    from moot.providers.catalog import CatalogEntry

CHECK_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-5-mini",
    "openai-chat": "gpt-5-mini",
    "gemini": "gemini-2.5-flash",
    "openrouter": "openai/gpt-5-mini",
    "groq": "llama-3.3-70b-versatile",
    "deepseek": "deepseek-chat",
    "mistral": "mistral-small-latest",
    "xai": "grok-3-mini",
    "together": "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    "cerebras": "llama3.1-8b",
}
"""A cheap model per provider for `--check`; local servers need `--model`."""


async def check(
    spec: str,
    environ: Mapping[str, str] | None = None,
    models: Mapping[str, CatalogEntry] | None = None,
) -> str:
    """One tiny real request to `spec`; a line with the latency or the error.

    Args:
        spec: `provider/model`.
        environ: Where the key and endpoint come from; `os.environ` when None.
        models: The settings' catalog entries, over the built-in catalog.
    """
    from moot.providers.base import ProviderError
    from moot.providers.registry import UnknownModel

    try:
        return f"{spec}: ok ({await _probe(spec, environ, models)})"
    except UnknownModel as exc:
        return f"{spec}: {exc}"
    except ProviderError as exc:
        return f"{spec}: error: {exc}"


async def _probe(
    spec: str,
    environ: Mapping[str, str] | None,
    models: Mapping[str, CatalogEntry] | None = None,
) -> str:
    """The request `check` sends; its latency, or the `ProviderError` (`UnknownModel`)."""
    from moot.protocol.messages import UserMessage
    from moot.providers.base import ModelRequest
    from moot.providers.config import RetryPolicy
    from moot.providers.registry import adapter_for, model_config

    config = replace(model_config(spec, environ, models=models), retry=RetryPolicy(attempts=1))
    request = ModelRequest(
        model=spec,
        system="Answer with the single word OK.",
        messages=(UserMessage(content="Say OK."),),
        max_output_tokens=16,
    )
    return await _timed(adapter_for(config), request)


async def _timed(provider: object, request: object) -> str:
    from moot.providers.base import TextPart

    started = time.perf_counter()
    first: float | None = None
    async for delta in provider.stream(request):  # type: ignore[attr-defined]
        if first is None and isinstance(delta, TextPart):
            first = time.perf_counter()
    total = (time.perf_counter() - started) * 1000
    ttft = f"first token {(first - started) * 1000:.0f} ms, " if first else ""
    return f"{ttft}total {total:.0f} ms"


class KeyCheck(msgspec.Struct, frozen=True):
    """What the provider said of a key: `refused` only for an answer that names the key bad
    (401, 403); anything else (offline, overloaded) leaves it unknown."""

    refused: bool
    note: str
    """A line for the person (never the key)."""


async def check_key(provider: str, key: str, environ: Mapping[str, str] | None = None) -> KeyCheck:
    """Try `key` with one tiny request to `provider`'s cheap model (`CHECK_MODELS`)."""
    import os

    from moot.providers import credentials
    from moot.providers.base import ProviderError

    endpoint = credentials.ENDPOINTS.get(provider)
    model = CHECK_MODELS.get(provider)
    if endpoint is None or not endpoint.key_env or model is None:
        return KeyCheck(False, f"{provider}: not checked (no model to try it with)")
    # The key tried is the only one of this provider's variables: none set in the shell wins.
    tried = {k: v for k, v in (os.environ if environ is None else environ).items()}
    tried |= dict.fromkeys(endpoint.key_env, "") | {endpoint.key_env[0]: key}
    try:
        line = await _probe(f"{provider}/{model}", tried)
    except ProviderError as exc:
        if exc.status in (401, 403):
            return KeyCheck(True, f"{provider} refused the key (HTTP {exc.status}): {exc.message}")
        return KeyCheck(False, f"could not check it ({exc}); moot doctor --check tries again")
    return KeyCheck(False, f"{provider} took it ({line})")
