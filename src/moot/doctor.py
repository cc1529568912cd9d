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

from moot.paths import workspace_root
from moot.providers.report import configured, report_lines

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


def run_doctor(options: Namespace) -> int:
    from moot.client.assemble import session_environ
    from moot.settings import SettingsError, load_settings

    try:
        settings = load_settings(workspace_root(Path.cwd()))
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
