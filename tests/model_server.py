"""A real HTTP server on 127.0.0.1 that plays model APIs for tests (not a test module).

It answers requests in order from a queue of `Reply`s: recorded-shape SSE bodies, error
statuses, and faults (a connection reset before or after the first byte, a truncated stream, a
server slower than the client's read timeout). Every request is recorded, so tests assert the
exact request an adapter sent. It runs its own event loop in a thread, so both async tests and
subprocess tests (`moot -p` against it) can use it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

FIXTURES = Path(__file__).with_name("fixtures") / "sse"


def sse_fixture(api: str, name: str) -> bytes:
    """A recorded-shape SSE body from tests/fixtures/sse/<api>/<name>.sse."""
    return (FIXTURES / api / f"{name}.sse").read_bytes()


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunk_size: int = 64
    """Bytes per write, so clients see the stream arrive in pieces."""
    fault: Literal["reset_before", "reset_after", "truncate", "slow"] | None = None
    fault_at: int = 0
    """For reset_after and truncate: bytes of the body sent before the fault."""
    delay: float = 0.0
    """For slow: seconds before the first byte of the body."""
    content_type: str = "text/event-stream"


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.perf_counter)
    """When the whole request had arrived (`time.perf_counter`), for benchmarks' timelines."""

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class ModelServer:
    """`with ModelServer() as server: server.replies.append(Reply(...)); server.url`."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Request] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, *replies: Reply) -> ModelServer:
        self.replies.extend(replies)
        return self

    def __enter__(self) -> ModelServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._thread.join(10)
        self._loop.close()

    async def _shutdown(self) -> None:
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._loop.call_soon(self._loop.stop)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    name, value = line.split(":", 1)
                    headers[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Request(method, path, headers, body))
            reply = self.replies.popleft() if self.replies else Reply(404, b'{"error":"no reply"}')
            await self._answer(reply, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            if not writer.is_closing():
                writer.close()

    async def _answer(self, reply: Reply, writer: asyncio.StreamWriter) -> None:
        if reply.fault == "reset_before":
            return _reset(writer)
        extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
        writer.write(
            f"HTTP/1.1 {reply.status} X\r\ncontent-type: {reply.content_type}\r\n"
            f"transfer-encoding: chunked\r\nconnection: close\r\n{extra}\r\n".encode()
        )
        await writer.drain()
        if reply.fault == "slow":
            await asyncio.sleep(reply.delay)
        body = reply.body
        cut = reply.fault_at if reply.fault in ("reset_after", "truncate") else len(body)
        for start in range(0, cut, reply.chunk_size):
            piece = body[start : min(start + reply.chunk_size, cut)]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        if reply.fault == "reset_after":
            return _reset(writer)
        if reply.fault != "truncate":
            writer.write(b"0\r\n\r\n")  # the last chunk: a clean end
        await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Abort the connection with a TCP RST (SO_LINGER 0), as a crashed server would."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
