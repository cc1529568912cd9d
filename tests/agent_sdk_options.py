"""Options for the real Claude Agent SDKs (`claude_agent_sdk`, Python; the TypeScript one
through `moot_cli_shim`) that run `moot` in a directory with a scripted model (`MOOT_MODEL`),
so nothing leaves the machine."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def moot_cli_shim(tmp_path: Path, turns: Sequence[object]) -> tuple[Path, Path]:
    """A two-line shim running `python -m moot.cli` (what an SDK is told is its CLI), and the
    script of the scripted `turns` (`MOOT_MODEL=scripted:<script>`), both in `tmp_path`."""
    shim = tmp_path / "moot-cli"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m moot.cli "$@"\n')
    shim.chmod(0o755)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(list(turns)))
    return shim, script


def sdk_options(tmp_path: Path, turns: Sequence[object], **more: Any) -> Any:
    """`ClaudeAgentOptions` whose `cli_path` is a shim running `python -m moot.cli` in
    `tmp_path`, with the scripted `turns`."""
    from claude_agent_sdk import ClaudeAgentOptions

    shim, script = moot_cli_shim(tmp_path, turns)
    env = {
        "MOOT_MODEL": f"scripted:{script}",
        "MOOT_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    return ClaudeAgentOptions(cli_path=str(shim), cwd=str(tmp_path), env=env, **more)


async def collect(messages: Any) -> list[Any]:
    return [m async for m in messages]
