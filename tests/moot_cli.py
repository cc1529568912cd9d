"""`moot` as a command the tests run (not a test module): `python -m moot.cli` of the sources
under test, with a MOOT_HOME of the test's own and no `MOOT_MODEL` from the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

TIMEOUT = 30  # seconds; a bound for a hung process, never a wait

RunMoot = Callable[..., subprocess.CompletedProcess[str]]


def moot_env(home: Path) -> dict[str, str]:
    env = {**os.environ, "MOOT_HOME": str(home)}
    env.pop("MOOT_MODEL", None)
    return env


def moot_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "moot.cli", *args]


def moot_in(tmp_path: Path) -> RunMoot:
    """Run `moot ARGS` in `tmp_path` with MOOT_HOME under it and MOOT_MODEL unset (`stdin`:
    text to type in; `env`: variables over that environment)."""

    def run(
        *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            moot_command(*args),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**moot_env(tmp_path / "home"), **(env or {})},
            timeout=TIMEOUT,
        )

    return run
