"""`moot mcp serve` reading a client that sends a line longer than it reads (`READ_LIMIT`): the
line is dropped, the memory it takes bounded, and the next messages answered
(`moot.frontend.served.PipeLines`).

A real `moot mcp serve` on pipes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from jsonrpc_pipes import answer, send
from moot.frontend.served import READ_LIMIT

pytestmark = pytest.mark.timeout(120)


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
        send(process.stdin, {"id": 1, "method": "initialize", "params": params})
        answer(process, 1)
        send(process.stdin, {"method": "notifications/initialized"})
        # Written from a thread: moot reads it as it comes, and the test reads what it answers.
        size = READ_LIMIT * 2 if cut == "no-line-end-in-reach" else READ_LIMIT + 1000
        stdin = process.stdin

        def long_line() -> None:
            chunk = b"x" * (1 << 20)
            for _ in range(size // len(chunk)):
                stdin.write(chunk)
            stdin.write(b"x" * (size % len(chunk)) + b"\n")
            send(stdin, {"id": 2, "method": "tools/list"})

        writer = threading.Thread(target=long_line)
        writer.start()
        tools = answer(process, 2)["result"]["tools"]
        writer.join()
        assert any(tool["name"] == "read" for tool in tools)
        stdin.close()
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
