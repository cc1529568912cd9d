"""`moot doctor`: which providers are configured, with which keys and endpoints.

`--check` sends one tiny real request per configured provider and reports the latency or the
error. Keys are never printed: only the name of the variable (or file) that holds each one.
Keys and base URLs are read as a session reads them: from the process environment over the
settings' `env` (`session_environ`), and `--check` looks models up with the settings' `models`.
"""

from __future__ import annotations

import asyncio
import sys
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

from moot.paths import workspace_root
from moot.providers.probe import CHECK_MODELS, check
from moot.providers.report import configured, report_lines

if TYPE_CHECKING:
    pass

EXIT_USAGE = 2


def run_doctor(options: Namespace) -> int:
    from moot.client.environment import session_environ
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
