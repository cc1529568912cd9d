"""moot killed (`kill -9`) while its MCP servers run: its host process, told by the end of its
stdin, ends each stdio server's process group, helpers included (`moot.mcp.host`)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_helpers import server
from moot.mcp.transport import end_group, start_time

pytestmark = pytest.mark.timeout(120)


def _until(condition: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, what
        select.select([], [], [], 0.05)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_killed_moot_leaves_no_mcp_server_helper_running(tmp_path: Path) -> None:
    """Before, the SDK closed each server's stdin, and a server that then ended by itself left
    the helper it had started running for good."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    log = tmp_path / "server.log"
    config = tmp_path / "mcp.json"
    parent = server("parent", env={"MOOT_TEST_MCP_LOG": str(log)})
    config.write_text(json.dumps({"mcpServers": {"helped": parent}}))
    script = tmp_path / "script.json"
    call = {"name": "bash", "arguments": {"command": "sleep 300", "timeout": 600}}
    script.write_text(json.dumps({"turns": [{"tool_calls": [call]}, {"text": "done"}]}))
    keep = ("PATH", "PYTHONPATH", "GIT_CONFIG_GLOBAL", "MOOT_SANDBOX")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(tmp_path / "home"), "MOOT_HOME": str(tmp_path / "moot-home")}
    args = ["-p", "go", "--model", f"scripted:{script}", "--mcp-config", str(config)]
    moot = subprocess.Popen(
        [sys.executable, "-m", "moot.cli", *args, "--permission-mode", "bypassPermissions"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    helper = 0
    try:
        # The server notes its helper's pid as it starts (the host has its own pid by then).
        _until(lambda: "helper" in (log.read_text() if log.exists() else ""), "no helper")
        (line,) = [x for x in log.read_text().splitlines() if x.startswith("helper")]
        helper = int(line.rpartition("pid=")[2])
        moot.send_signal(signal.SIGKILL)
        moot.wait(30)
        _until(lambda: not _alive(helper), "the server's helper lived on after moot was killed")
    finally:
        if moot.poll() is None:
            moot.kill()
            moot.wait()
        if helper:
            with contextlib.suppress(OSError):
                os.kill(helper, signal.SIGKILL)


def test_a_servers_group_is_ended_only_while_its_number_is_still_the_servers() -> None:
    """The number of a server that is gone, its group empty, may be another process's by now
    (pids wrap at 32,768 here): that process's group is left alone."""
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        started = start_time(other.pid)
        assert started is not None
        end_group(other.pid, started - 1)  # as a server that started earlier, under that pid
        assert other.poll() is None
        end_group(other.pid, started)
        assert other.wait(10) == -signal.SIGKILL
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()


def test_what_a_server_that_exits_at_once_left_ends_with_moot(tmp_path: Path) -> None:
    """A server that ends at once, before the host can tell its pid (the child watcher has
    reaped it), left its helper running for good: its group was never ended. Three such
    servers: before, a host that told one's pid in time ended that one's group."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    marker = f"{400 + os.getpid() % 100}.{int(time.monotonic() * 1000) % 100000}"
    quick = {"command": "sh", "args": ["-c", f"sleep {marker} & exit 0"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {f"quick{n}": quick for n in range(3)}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "done"}]}))
    keep = ("PATH", "PYTHONPATH", "GIT_CONFIG_GLOBAL", "MOOT_SANDBOX")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(tmp_path / "home"), "MOOT_HOME": str(tmp_path / "moot-home")}
    args = ["-p", "go", "--model", f"scripted:{script}", "--mcp-config", str(config)]
    try:
        subprocess.run(
            [sys.executable, "-m", "moot.cli", *args],
            cwd=repo,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            timeout=90,
        )
        _until(lambda: not _helpers(marker), "a helper of a server that exited lived on")
    finally:
        for pid in _helpers(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _helpers(marker: str) -> list[int]:
    """The live processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes() and _alive(int(pid)):
                found.append(int(pid))
    return found
