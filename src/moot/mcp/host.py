"""The MCP host: a child process of moot that holds a session's MCP connections.

Run as `python -m moot.mcp.host` by `moot.mcp.manager.McpManager`. It reads `moot.mcp.wire`
requests from stdin, one per line, and writes reports to stdout; nothing else may write there,
so its own logging (and the SDK's) goes to `<log dir>/host.log`. It ends when moot says `stop`
or when its stdin closes (moot is gone), and every server's process ends with it. moot
lowers its priority as it starts it (`nice` 10), and its servers inherit that: starting them is
background work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from moot.mcp import wire
from moot.mcp.connection import Connection, ServerUnavailable, _plain
from moot.mcp.results import capped, outputs_dir, render_blocks, resource_text, tool_text
from moot.mcp.transport import adopt_orphans, end_group, end_orphans, reap_orphans
from moot.protocol.mcp import McpResourceText

READ_LIMIT = 64 << 20
"""The longest request line (a tool call's arguments)."""
REAP_EVERY = 1.0
"""Seconds between two looks for the orphans that exited (`transport.reap_orphans`)."""


class Host:
    """The connections of one session, and the answers to moot's requests."""

    def __init__(self, setup: wire.Setup, send: Callable[[wire.Report], None]) -> None:
        self.setup = setup
        self.send = send
        self.connections: dict[str, Connection] = {}
        self.outputs = outputs_dir(setup.workspace, setup.outputs_dir)
        self._tasks: set[asyncio.Task[None]] = set()
        self._asks: dict[int, asyncio.Future[wire.ElicitAnswer]] = {}
        self._next_ask = 0

    async def ask(
        self,
        server: str,
        message: str,
        schema: dict[str, Any],
        sampling: dict[str, Any] | None = None,
    ) -> wire.ElicitAnswer:
        """Put a server's question (or request for the model: `sampling`) to moot
        (`wire.Elicit`) and wait for the answer."""
        self._next_ask += 1
        ask_id = self._next_ask
        future: asyncio.Future[wire.ElicitAnswer] = asyncio.get_running_loop().create_future()
        self._asks[ask_id] = future
        try:
            self.send(
                wire.Elicit(
                    ask_id=ask_id, server=server, message=message, schema=schema, sampling=sampling
                )
            )
            return await future
        finally:
            self._asks.pop(ask_id, None)

    def handle(self, request: wire.Request) -> None:
        match request:
            case wire.StartServer(server=config):
                connection = self.connections.get(config.name)
                if connection is not None and connection.config == config and connection.live:
                    # Asked to start while it runs: moot restarts it (`RestartMcpServer`).
                    self._spawn(connection.restart())
                    return
                if connection is None or connection.config != config:
                    if connection is not None:
                        self._spawn(connection.close())
                    connection = Connection(config, self.setup, self.send, self.ask)
                    self.connections[config.name] = connection
                connection.start()
            case wire.CallTool():
                self._spawn(self._call_tool(request))
            case wire.GetPrompt():
                self._spawn(self._get_prompt(request))
            case wire.ReadResource():
                self._spawn(self._read_resource(request))
            case wire.ElicitAnswer(ask_id=ask_id):
                if (future := self._asks.get(ask_id)) is not None and not future.done():
                    future.set_result(request)

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _connection(self, request_id: int, server: str) -> Connection | None:
        connection = self.connections.get(server)
        if connection is None:
            self.send(wire.Failure(id=request_id, message=f"no MCP server {server!r} runs here"))
        return connection

    async def _call_tool(self, request: wire.CallTool) -> None:
        connection = self._connection(request.id, request.server)
        if connection is None:
            return

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            line = progress_line(progress, total, message)
            self.send(wire.Progress(id=request.id, text=line))

        def call(client: Any) -> Any:
            return client.call_tool(request.tool, request.arguments, progress_callback=on_progress)

        try:
            result = await connection.call(request.tool, call)
        except ServerUnavailable as exc:
            self.send(wire.Failure(id=request.id, message=str(exc)))
            return
        except Exception as exc:
            # The server answered with an error, or with a result that is not one.
            message = (
                f"MCP server {request.server} answered {request.tool} with an error: {_plain(exc)}"
            )
            self.send(wire.ToolAnswer(id=request.id, text=message, is_error=True))
            return
        rendered = tool_text(result)
        text = capped(
            rendered.text(), self.setup.max_output_chars, self.outputs, f"mcp-{request.server}"
        )
        self.send(
            wire.ToolAnswer(
                id=request.id,
                text=text,
                is_error=bool(result.is_error),
                images=tuple(rendered.images),
            )
        )

    async def _get_prompt(self, request: wire.GetPrompt) -> None:
        connection = self._connection(request.id, request.server)
        if connection is None:
            return
        try:
            result = await connection.call(
                f"prompt {request.prompt}",
                lambda c: c.get_prompt(request.prompt, request.arguments),
            )
        except Exception as exc:
            self.send(wire.Failure(id=request.id, message=_failure(request.server, exc)))
            return
        text = render_blocks(message.content for message in result.messages).text()
        self.send(wire.PromptAnswer(id=request.id, text=text))

    async def _read_resource(self, request: wire.ReadResource) -> None:
        connection = self._connection(request.id, request.server)
        if connection is None:
            return
        try:
            result = await connection.call(
                f"resource {request.uri}", lambda c: c.read_resource(request.uri)
            )
        except Exception as exc:
            self.send(wire.Failure(id=request.id, message=_failure(request.server, exc)))
            return
        texts: list[str] = []
        blobs: list[tuple[str, str]] = []
        mime = ""
        for contents in result.contents:
            blob = getattr(contents, "blob", None)
            if isinstance(blob, str):
                blobs.append((contents.mime_type or "application/octet-stream", blob))
            else:
                texts.append(resource_text(contents))
                mime = mime or (contents.mime_type or "")
        text = capped("\n".join(texts), self.setup.max_output_chars, self.outputs, "mcp-resource")
        self.send(
            wire.ResourceAnswer(
                id=request.id,
                resource=McpResourceText(
                    uri=request.uri, text=text, mime_type=mime, blobs=tuple(blobs)
                ),
            )
        )

    async def close(self) -> None:
        """Close every connection at once, each bounded; then end what the stdio servers left
        in their process groups (each leads one): the SDK signals a group only when its server
        outlives its closed stdin, so the helpers (a wrapper's, `npx`'s) of a server that ended
        by itself ran on for good."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(
            *(c.close() for c in self.connections.values()), return_exceptions=True
        )
        for connection in self.connections.values():
            if connection.pid is not None:
                end_group(connection.pid, connection.started)
        end_orphans()  # what servers that ended before their pid was told left


def _failure(server: str, exc: Exception) -> str:
    if isinstance(exc, ServerUnavailable):
        return str(exc)
    return f"MCP server {server} answered with an error: {_plain(exc)}"


async def serve() -> None:
    """Answer requests on stdin until `stop` or the end of stdin."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer

    def send(report: wire.Report) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            out.write(wire.encode(report))
            out.flush()

    host: Host | None = None
    reaping = asyncio.create_task(_reap_orphans())
    try:
        while line := await reader.readline():
            try:
                request = wire.decode_request(line)
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                logging.getLogger("moot.mcp").warning("not a request: %s", exc)
                continue
            if isinstance(request, wire.Setup):
                host = Host(request, send)
                _log_to(Path(request.log_dir) / "host.log")
            elif isinstance(request, wire.Stop):
                break
            elif host is not None:
                host.handle(request)
    finally:
        reaping.cancel()
        if host is not None:
            await host.close()


async def _reap_orphans() -> None:
    """Reap, every `REAP_EVERY` seconds, what the servers left that has exited. A look, not a
    SIGCHLD handler: the SDK's child watcher is another's to set up, and may use that signal."""
    while True:
        reap_orphans()
        await asyncio.sleep(REAP_EVERY)


def _log_to(path: Path) -> None:
    """Send logging (the SDK's too) to a file: stdout is the wire, stderr nobody reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def progress_line(done: float, total: float | None, message: str | None) -> str:
    """One progress notification as a line: `[3/10] message` (or `[3]` without a total)."""
    count = f"{done:g}/{total:g}" if total else f"{done:g}"
    return f"[{count}] {message}\n" if message else f"[{count}]\n"


def main() -> None:
    """Serve, then leave at once: every connection is closed by then, and a thread still
    importing the SDK (a server that was starting) need not be waited for."""
    code = 0
    adopt_orphans()
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(serve())
    except KeyboardInterrupt:
        code = 130
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
