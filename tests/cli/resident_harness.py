"""A resident moot of a test's own: its socket directory, its workspace and the `moot` runs
that go through it (`tests/cli/test_resident*.py`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

START_TIMEOUT_S = 90.0
"""The resident process imports all of moot before it listens: seconds on a loaded machine."""
RUN_TIMEOUT_S = 60.0


@dataclass
class Resident:
    """A workspace, an environment that asks for a resident moot, and the runs made with it."""

    workspace: Path
    env: dict[str, str]
    script: Path

    def moot(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        """`moot ARGS` in the workspace, with this environment."""
        env = {**self.env, **kwargs.pop("env", {})}  # type: ignore[dict-item]
        return subprocess.run(
            [sys.executable, "-m", "moot.cli", *args],
            cwd=kwargs.pop("cwd", self.workspace),
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            **kwargs,  # type: ignore[arg-type]
        )

    def ask(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        """`moot -p ARGS` with the scripted model."""
        return self.moot("-p", *args, "--model", f"scripted:{self.script}", **kwargs)

    def status(self, env: dict[str, str] | None = None) -> dict[str, str] | None:
        """What `moot resident status` says, by line; None when no resident process runs."""
        result = self.moot("resident", "status", env=env or {})
        if result.returncode != 0:
            return None
        return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)

    def started(self, env: dict[str, str] | None = None, **kwargs: object) -> dict[str, str]:
        """Run once in-process, which starts the resident process, and wait until it answers."""
        result = self.ask("hi", env=env or {}, **kwargs)
        assert result.returncode == 0, result.stderr
        deadline = time.monotonic() + START_TIMEOUT_S
        while (status := self.status(env)) is None:
            assert time.monotonic() < deadline, self.log()
            time.sleep(0.1)
        return status

    def served(self, env: dict[str, str] | None = None) -> int:
        status = self.status(env)
        assert status is not None, self.log()
        return int(status["served"])

    def log(self) -> str:
        base = Path(self.env["XDG_RUNTIME_DIR"]) / "moot"
        return "\n".join(path.read_text() for path in base.glob("*.log"))

    def stop_all(self) -> None:
        """End every resident process of this test (running children included)."""
        for pid in resident_processes(Path(self.env["XDG_RUNTIME_DIR"])):
            for signum in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    break
                if _gone(pid, 5.0):
                    break


def resident_processes(runtime: Path) -> list[int]:
    """The resident processes (and their children, forks of them) started with `runtime` as
    their XDG_RUNTIME_DIR: this test's only (another test's, running at the same time, has
    the same command line)."""
    mine = f"XDG_RUNTIME_DIR={runtime}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"moot.cli.resident.zygote" not in (entry / "cmdline").read_bytes():
                continue
            if mine in (entry / "environ").read_bytes().split(b"\0"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as file:
                if file.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def resident(tmp_path: Path) -> Iterator[Resident]:
    """A resident moot's surroundings (not started: `Resident.started`)."""
    if sys.platform != "linux":
        pytest.skip("the resident moot is Linux only")
    run = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))  # short: a socket path <= 107 bytes
    workspace = tmp_path / "ws"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hello from the script"}] * 50}))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(run), "MOOT_RESIDENT": "1"}
    env.pop("MOOT_MODEL", None)
    here = Resident(workspace, env, script)
    try:
        yield here
    finally:
        here.stop_all()
        shutil.rmtree(run, ignore_errors=True)
