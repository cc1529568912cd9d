"""A served front end whose input ended, closing its sessions when a SIGTERM or SIGHUP comes:
the close goes on to its end (`moot.frontend.served.serve_until_ended`). An editor that stops
its agent closes the pipe and signals it at once, so the signal often lands in the close.

Real processes and signals: the front end's ending in a Python process of its own.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(60)

_SERVED = textwrap.dedent(
    """
    import asyncio, sys
    from moot.frontend.served import exit_status, serve_until_ended

    async def main():
        async def serving():
            return  # the client closed the pipe
        async def close():
            print("closing", flush=True)
            reader = asyncio.StreamReader()
            protocol = lambda: asyncio.StreamReaderProtocol(reader)
            await asyncio.get_running_loop().connect_read_pipe(protocol, sys.stdin)
            await reader.readline()  # the sessions' close, told by the test when to end
            print("closed", flush=True)
        return await serve_until_ended(serving(), close)

    print("status", exit_status(asyncio.run(main())), flush=True)
    """
)


def _caught(pid: int) -> int:
    """The signals process `pid` has handlers for (`SigCgt`), as a mask."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    raise AssertionError("no SigCgt")


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=["term", "hup"])
def test_a_signal_while_the_sessions_close_lets_the_close_finish(number: int) -> None:
    """Before, the signal cancelled the close halfway (a traceback, exit status 1): a command
    running in the sandbox, a Docker container or the sandbox's directories were left."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVED],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline() == b"closing\n"
        bit = 1 << (number - 1)
        assert _caught(process.pid) & bit
        process.send_signal(number)
        # The front end has taken the signal once its handler is gone (the next one kills).
        deadline = time.monotonic() + 20
        while _caught(process.pid) & bit:
            assert time.monotonic() < deadline, "the signal was never taken"
            select.select([], [], [], 0.01)
        out, err = process.communicate(b"go\n", timeout=20)
        assert out == f"closed\nstatus {128 + number}\n".encode(), err.decode()
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("front_end", ["acp", "mcp serve"])
def test_a_client_gone_ends_moot_as_the_end_of_its_input(
    tmp_path: Path, private_moot_home: Path, front_end: str
) -> None:
    """A client that stopped reading and went away: moot's answer finds no reader. Before, each
    ended in a traceback with exit status 1 (the MCP SDK's broken pipe; the ACP SDK closed
    `sys.stdout`, which moot then flushed)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    if front_end == "acp":
        params: dict[str, object] = {"protocolVersion": 1}
    else:
        info = {"name": "test", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    process = subprocess.Popen(
        [sys.executable, "-m", "moot.cli", *front_end.split()],
        cwd=repo,
        env=dict(os.environ, MOOT_HOME=str(private_moot_home)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdout.close()  # gone before moot answers
        _, err = process.communicate((json.dumps(request) + "\n").encode(), timeout=60)
        assert b"Traceback" not in err, err.decode()[-2000:]
        assert process.returncode == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
