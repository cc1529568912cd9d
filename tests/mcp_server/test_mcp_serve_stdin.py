"""`moot mcp serve` reading a client that sends a line longer than it reads (`READ_LIMIT`): the
line is dropped, the memory it takes bounded, and the next messages answered
(`moot.frontend.served.PipeLines`).

A real `moot mcp serve` on pipes.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from moot.frontend.served import READ_LIMIT

pytestmark = pytest.mark.timeout(120)


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    pipe.flush()


def _answer(process: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], deadline - time.monotonic())
        line = process.stdout.readline() if ready else b""
        assert line, "moot ended before it answered"
        message = json.loads(line)
        if message.get("id") == request_id and "method" not in message:
            return dict(message)
    raise AssertionError(f"no answer to request {request_id}")


@pytest.mark.parametrize("cut", ["no-line-end-in-reach", "line-end-past-the-limit"])
def test_a_line_longer_than_the_limit_is_dropped_and_the_next_answered(
    tmp_path: Path, private_moot_home: Path, cut: str
) -> None:
    """Before, such a line ended `moot mcp serve` in a traceback (exit status 1)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    env = dict(os.environ, MOOT_HOME=str(private_moot_home))
    process = subprocess.Popen(
        [sys.executable, "-m", "moot.cli", "mcp", "serve"],
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    try:
        info = {"name": "test", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": info}
        _send(process.stdin, {"id": 1, "method": "initialize", "params": params})
        _answer(process, 1)
        _send(process.stdin, {"method": "notifications/initialized"})
        # Written from a thread: moot reads it as it comes, and the test reads what it answers.
        size = READ_LIMIT * 2 if cut == "no-line-end-in-reach" else READ_LIMIT + 1000
        stdin = process.stdin

        def long_line() -> None:
            chunk = b"x" * (1 << 20)
            for _ in range(size // len(chunk)):
                stdin.write(chunk)
            stdin.write(b"x" * (size % len(chunk)) + b"\n")
            _send(stdin, {"id": 2, "method": "tools/list"})

        writer = threading.Thread(target=long_line)
        writer.start()
        tools = _answer(process, 2)["result"]["tools"]
        writer.join()
        assert any(tool["name"] == "read" for tool in tools)
        stdin.close()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
