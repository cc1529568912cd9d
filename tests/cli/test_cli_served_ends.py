"""`moot acp` and `moot mcp serve` ended by a signal while a command runs in the sandbox: each
closes its session as at the end of its input, so nothing it started lives on
(`moot.frontend.served`).

Real processes: moot on pipes, a real sandbox, a command that would run for minutes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from jsonrpc_pipes import answer, send
from sandbox_contract import BACKENDS, require

pytestmark = pytest.mark.timeout(120)
_WITHIN = 20.0
"""How long moot and what it started may take to end (well under a second here)."""


def _running(marker: str) -> list[int]:
    """The processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in line and state != "Z" and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def _until(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + _WITHIN
    while not condition():
        assert time.monotonic() < deadline, what
        select.select([], [], [], 0.05)


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (tmp_path / "tmp").mkdir()
    keep = ("PATH", "PYTHONPATH", "GIT_CONFIG_GLOBAL")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(tmp_path / "home"), "MOOT_HOME": str(tmp_path / "moot-home")}
    env |= {"TMPDIR": str(tmp_path / "tmp"), "GIT_CONFIG_NOSYSTEM": "1"}
    return repo, env


def _start(front_end: str, repo: Path, env: dict[str, str], marker: str) -> subprocess.Popen[bytes]:
    """`front_end` on pipes, running `sleep <marker>` in its sandbox."""
    command = {"command": f"sleep {marker}", "timeout": 600}
    if front_end == "mcp serve":
        args = ["mcp", "serve", "--permission-mode", "bypassPermissions"]
    else:
        script = repo.parent / "script.json"
        call = {"name": "bash", "arguments": command}
        script.write_text(json.dumps({"turns": [{"tool_calls": [call]}, {"text": "done"}]}))
        args = ["acp", "--model", f"scripted:{script}", "--permission-mode", "bypassPermissions"]
    process = subprocess.Popen(
        [sys.executable, "-m", "moot.cli", *args],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,  # as an editor starts it: no terminal's signals
        # SIGINT as a program gets it from a terminal: a test run started as a shell's background
        # job (`.ci/run &`) ignores it, and an ignored signal stays ignored across `exec`.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdin is not None
    if front_end == "mcp serve":
        info = {"name": "test", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        send(process.stdin, {"id": 1, "method": "initialize", "params": params})
        answer(process, 1)
        send(process.stdin, {"method": "notifications/initialized"})
        call = {"name": "bash", "arguments": command}
        send(process.stdin, {"id": 2, "method": "tools/call", "params": call})
    else:
        send(process.stdin, {"id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
        answer(process, 1)
        opened = {"cwd": str(repo), "mcpServers": []}
        send(process.stdin, {"id": 2, "method": "session/new", "params": opened})
        session = answer(process, 2)["result"]["sessionId"]
        prompt = [{"type": "text", "text": "go"}]
        params = {"sessionId": session, "prompt": prompt}
        send(process.stdin, {"id": 3, "method": "session/prompt", "params": params})
    return process


@pytest.mark.parametrize("backend", ["bubblewrap", "landlock"])
@pytest.mark.parametrize(
    ("front_end", "number"),
    [
        ("acp", signal.SIGTERM),
        ("acp", signal.SIGHUP),
        ("mcp serve", signal.SIGTERM),
        ("mcp serve", signal.SIGHUP),
        ("mcp serve", signal.SIGINT),
    ],
    ids=["acp-term", "acp-hup", "serve-term", "serve-hup", "serve-int"],
)
def test_a_signal_while_a_command_runs_ends_moot_and_all_it_started(
    place: tuple[Path, dict[str, str]], front_end: str, number: int, backend: str
) -> None:
    """Before, SIGTERM and SIGHUP killed either at once: the Landlock command lived on, the
    sandbox's directories stayed; `moot mcp serve` waited for its client's next line before a
    SIGINT could end it."""
    require(BACKENDS[backend])
    repo, env = place
    env["MOOT_SANDBOX"] = backend
    marker = f"{300 + number}.{os.getpid()}{int(time.monotonic() * 1000) % 100000}"
    process = _start(front_end, repo, env, marker)
    try:
        _until(lambda: _running(marker), "the command never started")
        process.send_signal(number)
        try:
            status = process.wait(_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"moot {front_end} lived on after {signal.Signals(number).name}")
        _until(lambda: not _running(marker), "the sandboxed command lived on")
        assert sorted(os.listdir(env["TMPDIR"])) == []  # the sandbox's directories are gone
        assert status == (130 if number == signal.SIGINT else 128 + number)
    finally:
        _end_all(process, marker)


def _end_all(process: subprocess.Popen[bytes], marker: str) -> None:
    """Never leave moot or its command running, whatever the test's verdict."""
    if process.poll() is None:
        process.kill()
        process.wait()
    for pid in _running(marker):
        os.kill(pid, signal.SIGKILL)


def _unread(process: subprocess.Popen[bytes]) -> int:
    """How many bytes moot wrote to its stdout that the test has not read."""
    assert process.stdout is not None
    return struct.unpack("i", fcntl.ioctl(process.stdout, termios.FIONREAD, b"\0" * 4))[0]


def _flood(process: subprocess.Popen[bytes], front_end: str) -> None:
    """Requests whose answers fill moot's stdout, which the test does not read (small ones:
    the pipe then fills to within a message of its capacity)."""
    assert process.stdin is not None
    request = (
        {"method": "ping"}
        if front_end == "mcp serve"
        else {"method": "initialize", "params": {"protocolVersion": 1}}
    )
    with contextlib.suppress(OSError):  # moot ended, or stopped reading: enough
        for number in range(100, 5000):
            send(process.stdin, {"id": number, **request})


@pytest.mark.parametrize("front_end", ["acp", "mcp serve"])
def test_a_client_that_reads_nothing_does_not_hold_moot_at_a_signal(
    place: tuple[Path, dict[str, str]], front_end: str
) -> None:
    """Before, a SIGTERM left either waiting for good on its write to the full pipe (the ACP
    SDK's sender, the MCP SDK's writing thread), its session never closed: the command ran on."""
    require(BACKENDS["landlock"])
    repo, env = place
    env["MOOT_SANDBOX"] = "landlock"
    marker = f"333.{os.getpid()}{int(time.monotonic() * 1000) % 100000}"
    process = _start(front_end, repo, env, marker)
    assert process.stdout is not None
    capacity = fcntl.fcntl(process.stdout, 1032)  # F_GETPIPE_SZ
    flooding = threading.Thread(target=_flood, args=(process, front_end), daemon=True)
    try:
        _until(lambda: _running(marker), "the command never started")
        flooding.start()
        # Full: no room for another message (one up to `PIPE_BUF` bytes is written whole).
        _until(lambda: _unread(process) > capacity - select.PIPE_BUF, "moot's stdout never filled")
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"moot {front_end} lived on after SIGTERM, its stdout full")
        _until(lambda: not _running(marker), "the sandboxed command lived on")
        assert status == 128 + signal.SIGTERM
    finally:
        _end_all(process, marker)
