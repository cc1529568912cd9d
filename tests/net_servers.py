"""Test servers for the network proxy: a small HTTP server on a 127.0.0.x address, answering
each GET with the host it was asked for and the path, and names the proxy resolves to them."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HOSTS = {
    "allowed.test": "127.0.0.2",
    "files.allowed.test": "127.0.0.2",
    "denied.test": "127.0.0.3",
    "asked.test": "127.0.0.4",
}
"""What the proxy resolves each test name to (its `hosts`); every server listens on its own
address of the loopback, so that a direct connection names one the sandbox cannot reach."""


class _Hello(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = f"hello {self.headers.get('Host', '?')} {self.path}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(address: str, port: int = 0) -> Iterator[int]:
    """An HTTP server on `address` while the block runs; yields its port."""
    server = http.server.ThreadingHTTPServer((address, port), _Hello)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def servers() -> Iterator[int]:
    """A server on each address of `HOSTS`, on one port; yields it."""
    with contextlib.ExitStack() as stack:
        port = stack.enter_context(serving(HOSTS["allowed.test"]))
        for name in ("denied.test", "asked.test"):
            stack.enter_context(serving(HOSTS[name], port))
        yield port
