"""A language server that misbehaves on purpose, over stdio: `silent` answers `initialize` and
`shutdown` and never publishes a diagnostic; `dies` exits with code 5 when a file is opened."""

from __future__ import annotations

import json
import sys


def read() -> dict[str, object] | None:
    length = 0
    while line := sys.stdin.buffer.readline():
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    if not length:
        return None
    message: dict[str, object] = json.loads(sys.stdin.buffer.read(length))
    return message


def answer(ident: object, result: object) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


def main(mode: str) -> None:
    while (message := read()) is not None:
        method = message.get("method")
        if method == "initialize":
            answer(message["id"], {"capabilities": {"textDocumentSync": 1}})
        elif method == "shutdown":
            answer(message["id"], None)
        elif method == "exit":
            return
        elif method == "textDocument/didOpen" and mode == "dies":
            sys.stderr.write("fake server: out of memory\n")
            sys.exit(5)


if __name__ == "__main__":
    main(sys.argv[1])
