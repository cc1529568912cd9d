"""`moot` as a person runs it, through a pseudo-terminal (pexpect), for the tests of the app
and the REPL as processes of their own (not a test module)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pexpect


def terminal_env(home: Path, *, term: str = "xterm-256color") -> dict[str, str]:
    """The environment of moot in the terminal: `PATH`, the test's own `MOOT_HOME` and git
    settings, a worktree's `PYTHONPATH` (its sources over the shared editable install), `HOME`
    at `home` and `TERM`; nothing else of the machine's."""
    keep = ("PATH", "MOOT_HOME", "GIT_CONFIG_GLOBAL", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "TERM": term}
    # pexpect is no terminal emulator: it never answers prompt_toolkit's cursor-position
    # requests, which would otherwise be waited for after each redraw.
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"
    return env


def in_terminal(
    program: str, args: Sequence[str], cwd: Path, env: Mapping[str, str]
) -> pexpect.spawn:
    """`program` with `args` in a 120x40 terminal; each `expect` waits 30 s at most."""
    return pexpect.spawn(
        program,
        list(args),
        cwd=str(cwd),
        env=dict(env),
        dimensions=(40, 120),
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
    )


def hello_repository(tmp_path: Path) -> tuple[Path, Path]:
    """An empty git repository (`tmp_path/repo`) and a script whose one turn says hello."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "script.yaml"
    script.write_text('turns:\n  - text: "hello"\n')
    return repo, script
