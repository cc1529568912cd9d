"""`moot doctor`: which providers are configured, with which keys and endpoints.

`--check` sends one tiny real request per configured provider and reports the latency or the
error. Keys are never printed: only the name of the variable (or file) that holds each one.
Keys and base URLs are read as a session reads them: from the process environment over the
settings' `env` (`session_environ`), and `--check` looks models up with the settings' `models`.
"""

from __future__ import annotations

import asyncio
import sys
import time
from argparse import Namespace
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from moot.providers import credentials

if TYPE_CHECKING:
    from moot.providers.catalog import CatalogEntry

EXIT_USAGE = 2

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


def configured(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None, str]]:
    """(provider, where its key is, base URL) for every provider moot knows.

    Where the key is: "key from <variable or key file>", None when there is none, or why a
    key found cannot be used (a control character inside it), which `--check` then reports.
    """
    from moot.providers.registry import UnknownModel

    rows = []
    for provider in credentials.ENDPOINTS:
        try:
            _, found = credentials.find_key(provider, environ)
            key = f"key from {found.source}" if found.source else None
        except UnknownModel as exc:
            key = f"unusable key: {exc}"
        rows.append((provider, key, credentials.base_url(provider, environ)))
    return rows


def shown_url(url: str) -> str:
    """`url` for display: credentials in it (`user:token@`, the query) hidden."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


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
    from moot.protocol.messages import UserMessage
    from moot.providers.base import ModelRequest, ProviderError, TextPart
    from moot.providers.config import RetryPolicy
    from moot.providers.registry import UnknownModel, adapter_for, model_config

    try:
        # One try only: doctor reports faults, it does not retry them away.
        config = replace(model_config(spec, environ, models=models), retry=RetryPolicy(attempts=1))
    except UnknownModel as exc:
        return f"{spec}: {exc}"
    provider = adapter_for(config)
    request = ModelRequest(
        model=spec,
        system="Answer with the single word OK.",
        messages=(UserMessage(content="Say OK."),),
        max_output_tokens=16,
    )
    started = time.perf_counter()
    first: float | None = None
    try:
        async for delta in provider.stream(request):
            if first is None and isinstance(delta, TextPart):
                first = time.perf_counter()
    except ProviderError as exc:
        return f"{spec}: error: {exc}"
    total = (time.perf_counter() - started) * 1000
    ttft = f"first token {(first - started) * 1000:.0f} ms, " if first else ""
    return f"{spec}: ok ({ttft}total {total:.0f} ms)"


def report_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """The report `moot doctor` prints (without `--check`): moot's version, then each provider
    with where its key is (never the key) and its endpoint (credentials in it hidden)."""
    from moot._version import __version__

    lines = [f"moot {__version__}"]
    for provider, key, url in configured(environ):
        if key is None and provider in credentials.KEYLESS_OPTIONAL:
            key = "no key needed"
        elif key is None:
            key = "no key (" + " or ".join(credentials.ENDPOINTS[provider].key_env) + ")"
        lines.append(f"  {provider:<12} {key:<32} {shown_url(url)}")
    return lines


def run_doctor(options: Namespace) -> int:
    from moot.session_setup import session_environ
    from moot.settings import SettingsError, load_settings

    try:
        settings = load_settings(Path.cwd())
    except SettingsError as exc:
        print(f"moot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    environ = session_environ(settings)
    print("\n".join(report_lines(environ)))
    rows = configured(environ)
    if not options.check:
        return 0
    specs = list(options.model or [])
    if not specs:
        specs = [
            f"{provider}/{CHECK_MODELS[provider]}"
            for provider, key, _ in rows
            if key and provider in CHECK_MODELS
        ]
    if not specs:
        print("nothing to check: no provider has a key (or pass --model provider/model)")
        return 1

    async def all_checks() -> list[str]:
        return await asyncio.gather(
            *(check(spec, environ, models=settings.models) for spec in specs)
        )

    results = asyncio.run(all_checks())
    for line in results:
        print(f"  {line}")
    return 0 if all(": ok " in line for line in results) else 1
