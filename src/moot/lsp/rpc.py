"""JSON-RPC 2.0 over a language server's stdin and stdout, with LSP's `Content-Length` frames.

Hand-written rather than pygls: moot needs a dozen messages of the protocol (initialize,
open, change, diagnostics, shutdown), and pygls's client brings lsprotocol's hundreds of
attrs classes and cattrs converters (a few hundred milliseconds to import, and a converter
per message) plus a threading model of its own; here a message is a dict decoded by msgspec,
and the reader is one task on the session's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import msgspec

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
METHOD_NOT_FOUND = -32601


class ServerGone(ConnectionError):
    """The server closed its output (it exited or crashed) before it answered."""


class RpcError(Exception):
    """The server answered a request with an error."""


Notified = Callable[[str, Any], None]
"""Called with each notification's method and params."""
Asked = Callable[[str, Any], Any]
"""Answers a request the server makes of the client; raising `LookupError` answers that the
method is not known."""


class Connection:
    """Requests and notifications over a server's pipes; `run` reads its answers."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        on_notify: Notified,
        on_request: Asked,
    ) -> None:
        self._reader, self._writer = reader, writer
        self._on_notify, self._on_request = on_notify, on_request
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self.closed = asyncio.Event()
        """Set once the server's output ended: every request after it fails at once."""

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result.

        Raises:
            ServerGone: The server's output ended first.
            RpcError: It answered with an error.
        """
        if self.closed.is_set():
            raise ServerGone(method)
        self._next_id += 1
        ident = self._next_id
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = answer
        try:
            self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
            return await answer
        finally:
            self._pending.pop(ident, None)

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (nothing answers it); dropped once the server is gone."""
        if not self.closed.is_set():
            self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message: dict[str, Any]) -> None:
        body = _ENCODER.encode(message)
        try:
            self._writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        except (ConnectionError, RuntimeError):  # its stdin is closed: it is going away
            self._end()

    async def run(self) -> None:
        """Read messages until the server's output ends, then fail what still waits."""
        try:
            while True:
                message = await self._read_one()
                if message is None:
                    break
                self._dispatch(message)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self._end()

    def _end(self) -> None:
        self.closed.set()
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(ServerGone("the language server stopped"))

    async def _read_one(self) -> dict[str, Any] | None:
        length = -1
        while True:
            line = await self._reader.readline()
            if not line:
                return None
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length < 0:
            raise ValueError("a message without Content-Length")
        body = await self._reader.readexactly(length)
        message = _DECODER.decode(body)
        return message if isinstance(message, dict) else {}

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        ident = message.get("id")
        if method is None:  # an answer to one of ours
            answer = self._pending.get(ident) if isinstance(ident, int) else None
            if answer is None or answer.done():
                return
            if "error" in message:
                error = message["error"] or {}
                answer.set_exception(RpcError(str(error.get("message", error))))
            else:
                answer.set_result(message.get("result"))
        elif ident is None:
            with contextlib.suppress(Exception):  # a bad notification must not stop the reader
                self._on_notify(method, message.get("params"))
        else:
            try:
                result = self._on_request(method, message.get("params"))
            except LookupError:
                error = {"code": METHOD_NOT_FOUND, "message": f"{method} is not supported"}
                self._send({"jsonrpc": "2.0", "id": ident, "error": error})
            else:
                self._send({"jsonrpc": "2.0", "id": ident, "result": result})
