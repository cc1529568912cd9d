"""`moot acp` reading what an editor (or anything on its pipe) sends that is not a message: a
line longer than it reads (`READ_LIMIT`) is dropped with its memory bounded, a line that does
not parse is one short line on stderr, and the next request is answered either way
(`moot.acp.wire.LineTransport`).

A real `moot acp` on pipes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from jsonrpc_pipes import answer, send

pytestmark = pytest.mark.timeout(180)

INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


@pytest.fixture
def acp(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`moot acp` on pipes, its stderr in `tmp_path / "stderr"`."""
    env = {**os.environ, "MOOT_HOME": str(tmp_path / ".home")}
    with (tmp_path / "stderr").open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "moot.cli", "acp"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def peak_memory(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _answered_and_ended(acp: subprocess.Popen[bytes], tmp_path: Path) -> list[str]:
    """Send a request, check its answer, close stdin and see `moot acp` end well; the lines
    it wrote on stderr."""
    assert acp.stdin is not None
    send(acp.stdin, {"id": 1, "method": "initialize", "params": INITIALIZE})
    assert answer(acp, 1)["result"]["protocolVersion"] == 1
    acp.stdin.close()
    assert acp.wait(30) == 0
    return (tmp_path / "stderr").read_text().splitlines()


def test_a_huge_line_is_dropped_in_bounded_memory_and_the_next_request_answered(
    acp: subprocess.Popen[bytes],
) -> None:
    """Before, the SDK gathered the line whole (its reader's limit only split it in pieces): a
    200 MB line took 447 MB."""
    assert acp.stdin is not None
    send(acp.stdin, {"id": 0, "method": "initialize", "params": INITIALIZE})
    answer(acp, 0)
    before = peak_memory(acp.pid)
    size = 200 << 20
    stdin = acp.stdin

    def huge_line() -> None:  # written from a thread: moot reads it as it comes
        chunk = b"x" * (1 << 20)
        for _ in range(size // len(chunk)):
            stdin.write(chunk)
        stdin.write(b"\n")
        send(stdin, {"id": 1, "method": "initialize", "params": INITIALIZE})

    writer = threading.Thread(target=huge_line)
    writer.start()
    assert answer(acp, 1)["result"]["protocolVersion"] == 1
    writer.join()
    grew = peak_memory(acp.pid) - before
    print(f"peak memory grew by {grew >> 20} MiB for a {size >> 20} MiB line")
    assert grew < 160 << 20
    stdin.close()
    assert acp.wait(30) == 0


def test_lines_that_are_not_messages_are_told_briefly_and_the_next_request_answered(
    acp: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    """Before, each line that did not parse was a full traceback on stderr (the SDK's
    `logging.exception`): anything on the pipe could fill the editor's log."""
    assert acp.stdin is not None
    garbage = [b"{", b"not json at all " * 100, b"\xff\xfe\x00", b"[" * 100_000] * 250
    acp.stdin.write(b"\n".join(garbage) + b"\n")
    told = _answered_and_ended(acp, tmp_path)
    assert len(told) <= 12 and all(len(line) < 400 for line in told), told
    assert "ignored a line that is not a JSON-RPC message: '{'" in told[0]
    assert told[-1] == "moot acp: 1000 lines that are not JSON-RPC messages ignored so far"


@pytest.mark.parametrize("line", [b"[1]", b"3", b'"a string"', b"null"])
def test_json_that_is_not_an_object_is_ignored_as_well(
    acp: subprocess.Popen[bytes], tmp_path: Path, line: bytes
) -> None:
    assert acp.stdin is not None
    acp.stdin.write(line + b"\n")
    assert "not a JSON-RPC message" in _answered_and_ended(acp, tmp_path)[0]


def test_notifications_it_cannot_handle_are_told_briefly_and_the_next_request_answered(
    acp: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    """Before, each was a full traceback on stderr (the SDK's `logging.exception`)."""
    assert acp.stdin is not None
    for number in range(1000):
        send(acp.stdin, {"method": f"no/such/method/{number}", "params": {}})
    send(acp.stdin, {"method": "session/cancel", "params": {"sessionId": 3}})
    told = _answered_and_ended(acp, tmp_path)
    assert len(told) <= 12 and all(len(line) < 400 for line in told), told
    assert "method=no/such/method/0: RequestError: Method not found" in told[0]
    assert told[-1] == "moot acp: 1000 notifications that failed so far"
