"""JSON-RPC with a moot process on pipes, one message per line (`moot acp`, `moot mcp serve`):
send a message, and wait (bounded) for the answer to a request."""

from __future__ import annotations

import json
import select
import subprocess
import time
from typing import IO, Any


def send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    pipe.flush()


def answer(process: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    """The answer to request `request_id`; what comes before it (notifications, requests of
    moot's own) is read past."""
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
