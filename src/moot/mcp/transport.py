"""The wire to one MCP server, for a `Connection` in the host process: a stdio server's
process (what it writes to stderr kept in a private log file) or an HTTP endpoint (streamable
HTTP or SSE, signed in with OAuth unless a header authorizes), and the stream of what arrives,
watched for lines that are not JSON-RPC messages. The SDK is imported here (only the host
process and `moot mcp serve` import it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

from moot.paths import make_private_dir, private_opener
from moot.protocol.mcp import McpServerConfig

_PR_SET_CHILD_SUBREAPER = 36


class WatchedStream:
    """The SDK's read stream, counting what arrived that was not a JSON-RPC message."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.malformed = 0
        self.first_malformed = ""

    def _see(self, item: Any) -> Any:
        if isinstance(item, Exception):
            self.malformed += 1
            if not self.first_malformed:
                self.first_malformed = _what_came(item)
        return item

    async def receive(self) -> Any:
        return self._see(await self.inner.receive())

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        return self._see(await self.inner.__anext__())

    async def __aenter__(self) -> WatchedStream:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self.inner.__aexit__(*exc)


def open_stderr_log(path: Path, stack: AsyncExitStack) -> TextIO:
    """The server's stderr log, opened on `stack` to append (its directory made private first:
    a server's stderr may hold tokens)."""
    make_private_dir(path.parent)
    # A local file opened once per start: not worth a thread.
    return stack.enter_context(open(path, "a", encoding="utf-8", opener=private_opener))


async def open_stdio(
    config: McpServerConfig, cwd: str, errlog: TextIO, stack: AsyncExitStack
) -> tuple[Any, Any, int | None]:
    """Start a stdio server on `stack`: its read and write streams, and its pid (None when it
    cannot be told)."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=dict(config.env), cwd=cwd
    )
    before = children()
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    # The SDK starts it in a session of its own; an orphan adopted meanwhile leads none.
    started = [pid for pid in children() - before if _ids(pid)[1:] == (pid, pid)]
    return read, write, min(started) if started else None


def http_transport(
    config: McpServerConfig, auth_file: Path, stack: AsyncExitStack, sign_in: Callable[[str], None]
) -> Any:
    """The transport of an HTTP server, to enter on `stack`: streamable HTTP, or SSE. Without
    an `Authorization` header it signs in with OAuth (`sign_in` is told the URL to open)."""
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    auth = None
    if not any(key.lower() == "authorization" for key in config.headers):
        from moot.mcp.oauth import oauth_provider

        auth = oauth_provider(config.url, auth_file, sign_in)
    if config.transport == "sse":
        return sse_client(config.url, headers=dict(config.headers) or None, auth=auth)
    http = create_mcp_http_client(headers=dict(config.headers) or None, auth=auth)
    return _Entered(stack, http, lambda: streamable_http_client(config.url, http_client=http))


class Streams:
    """A transport that is already open: the SDK's `Client` enters it like any other."""

    def __init__(self, read: Any, write: Any) -> None:
        self.streams = (read, write)

    async def __aenter__(self) -> tuple[Any, Any]:
        return self.streams

    async def __aexit__(self, *exc: Any) -> None:
        return None


class _Entered:
    """Enters an HTTP client on `stack`, then the transport built on it."""

    def __init__(self, stack: AsyncExitStack, http: Any, make: Callable[[], Any]) -> None:
        self.stack, self.http, self.make = stack, http, make

    async def __aenter__(self) -> Any:
        await self.stack.enter_async_context(self.http)
        return await self.stack.enter_async_context(self.make())

    async def __aexit__(self, *exc: Any) -> None:
        return None


def _what_came(exc: Exception) -> str:
    """What a line that did not parse held, as far as the parse error tells."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            value = errors()[0].get("input")
        except Exception:  # an error of another shape: say what it says
            value = None
        if isinstance(value, str | bytes):
            text = value if isinstance(value, str) else value.decode("utf-8", "replace")
            return repr(text[:80] + ("..." if len(text) > 80 else ""))
    text = str(exc).strip()
    return text.splitlines()[0][:120] if text else type(exc).__name__


def children() -> set[int]:
    """This process's child processes (Linux), to learn a stdio server's pid."""
    found: set[int] = set()
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as file:
                found.update(int(pid) for pid in file.read().split())
    except OSError:
        pass
    return found


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, from `/proc`); None when it is gone
    (or there is no `/proc`)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            stat = file.read()
        return int(stat.rpartition(")")[2].split()[19])  # the 22nd field: after state (3rd)
    except (OSError, ValueError, IndexError):
        return None


def end_group(pid: int, started: int | None) -> None:
    """End with SIGKILL the process group a stdio server led (the SDK starts each in a session
    of its own), what it left there included; not when `pid` is another process's by now (the
    kernel reuses the number only once the group is empty, and pids wrap at 32,768 on some
    machines)."""
    now = start_time(pid)
    if now is not None and now != started:
        return
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def adopt_orphans() -> None:
    """Make this process the parent of what its stdio servers' processes leave when they end
    (Linux's child subreaper), for `end_orphans`: a server that ends at once is reaped before
    its pid can be told, and its group, never ended, kept its helpers running for good."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def end_orphans() -> None:
    """End with SIGKILL the process group of every child left in a stdio server's session
    (`adopt_orphans`); run once the servers are closed and reaped. Each is an orphan only this
    process reaps, so neither its number nor its group's can be another process's. What made a
    session of its own (a daemon) is left, as ending a server's group leaves it; so is what
    runs in moot's own session."""
    own = os.getsid(0)
    for pid in children():
        _, group, session = _ids(pid)
        if session in (0, pid, own):
            continue
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)


def reap_orphans() -> None:
    """Reap the orphans adopted (`adopt_orphans`) that have exited, so none stays a zombie
    until the host ends (a server that starts a helper per call left one each time).

    Never a process the SDK started, nor one this process started otherwise: their exits are
    waited for by the one that started it (the SDK's child watcher waits for each server's
    pid), and reaping it first would take its status from it. The SDK starts each server in a
    session of its own (it leads it), and what this process starts otherwise runs in this
    process's session; an orphan runs in its server's session, neither its own nor this
    process's. Only this process reaps such a number, so it cannot be another's meanwhile. An
    orphan that led a session of its own (a daemon's first fork) is left, as `end_orphans`
    leaves it."""
    own = os.getsid(0)
    for pid in children():
        state, _, _, session = _stat(pid)
        if state != "Z" or session in (0, pid, own):
            continue
        with contextlib.suppress(ChildProcessError):
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG)


def _ids(pid: int) -> tuple[int, int, int]:
    """Process `pid`'s parent, group and session (zeros when it is gone)."""
    return _stat(pid)[1:]


def _stat(pid: int) -> tuple[str, int, int, int]:
    """Process `pid`'s state (`Z`: a zombie), parent, group and session (empty and zeros when
    it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            fields = file.read().rpartition(")")[2].split()
        return fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    except (OSError, ValueError, IndexError):
        return "", 0, 0, 0


def exited(pid: int) -> bool:
    """Whether a child has exited (gone, or a zombie nobody reaped yet), from `/proc`; the
    SDK's own watcher reaps it, so it is never waited for here."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            stat = file.read()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] == ["Z"]
