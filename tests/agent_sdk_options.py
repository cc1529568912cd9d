"""Options for the real Claude Agent SDK (`claude_agent_sdk`, Python) that run `moot` in a
directory with a scripted model (`MOOT_MODEL`), so nothing leaves the machine."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def sdk_options(tmp_path: Path, turns: Sequence[object], **more: Any) -> Any:
    """`ClaudeAgentOptions` whose `cli_path` is a shim running `python -m moot.cli` in
    `tmp_path`, with the scripted `turns`."""
    from claude_agent_sdk import ClaudeAgentOptions

    shim = tmp_path / "moot-cli"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m moot.cli "$@"\n')
    shim.chmod(0o755)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(list(turns)))
    env = {
        "MOOT_MODEL": f"scripted:{script}",
        "MOOT_HOME": str(tmp_path / "home"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    return ClaudeAgentOptions(cli_path=str(shim), cwd=str(tmp_path), env=env, **more)


async def collect(messages: Any) -> list[Any]:
    return [m async for m in messages]
