"""How a front end that serves a client on stdio (`moot acp`, `moot mcp serve`) ends: at the end
of its input, and just as well when a signal asks it to.

A SIGTERM or SIGHUP (an editor that stops its agent, a terminal that went away) killed either
at once, by the signal's default action: their sessions never closed, so a command running in
the sandbox lived on (Landlock), a Docker container kept running and the sandbox's temporary
directories stayed. `serve_until_ended` turns the first such signal into the cancellation of
the serving task, after which the sessions close; a second one ends the process at once. A
signal that comes while they close (an editor closes the pipe and signals its agent at once)
lets the close go on: it cancelled the close halfway, and left what the sessions had started.

`moot mcp serve` also could not end on a signal (SIGINT included) while its client was quiet:
the MCP SDK reads stdin in a worker thread, which nothing stops, and its transport waits for
that thread before it lets go. `stdin_lines` reads stdin on the event loop instead, and
`stdout_writer` writes stdout there: a client that reads nothing held the SDK's writing thread,
and the process, for good. Serving has `WIND_DOWN` seconds to end after a signal (the ACP SDK
waits for its last write as it ends), then the sessions close anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
from collections.abc import Awaitable, Callable, Iterator

_ENDING = (signal.SIGTERM, signal.SIGHUP)
READ_LIMIT = 64 << 20
"""The longest line a client may send: a longer one is dropped (the memory it takes is bounded),
and read as `TOO_LONG`, which the MCP SDK takes for a message that does not parse."""
TOO_LONG = "(a message longer than 64 MiB, dropped)\n"
DROPPED_PIECE = 1 << 20
"""How much of a line too long is dropped at a time."""
WIND_DOWN = 2.0
"""How long serving may take to end after a signal before the sessions close anyway."""


async def serve_until_ended(
    serving: Awaitable[None], close: Callable[[], Awaitable[None]]
) -> int | None:
    """Await `serving` until it ends (None) or a SIGTERM or SIGHUP ends moot (the signal's
    number); `close` runs either way, so the sessions close and what they started ends."""
    served = asyncio.ensure_future(serving)
    signalled = asyncio.Event()
    with _ended_by_signals(signalled) as taken:
        try:
            await _first_of(served, signalled)
            if not served.done():  # a signal: the close, not a signal, ends what comes after
                await _wound_down(served)
            elif not served.cancelled():
                _unless_client_gone(served)
        except asyncio.CancelledError:  # this task (SIGINT): the sessions close all the same
            await _wound_down(served)
            raise
        finally:
            await close()
    return taken[0] if taken else None


def _unless_client_gone(served: asyncio.Future[None]) -> None:
    """Raise what went wrong serving, unless the client went away (its pipe broken under an
    answer): that ends serving as the end of its input does, without a traceback."""
    try:
        served.result()
    except* (BrokenPipeError, ConnectionResetError):
        pass


async def _first_of(served: asyncio.Future[None], signalled: asyncio.Event) -> None:
    waiting = asyncio.ensure_future(signalled.wait())
    try:
        await asyncio.wait((served, waiting), return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


async def _wound_down(served: asyncio.Future[None]) -> None:
    """Cancel `served` and give it `WIND_DOWN` seconds to end: a client that reads nothing
    holds its last write for good, and the sessions must close anyway."""
    served.cancel()
    await asyncio.wait((served,), timeout=WIND_DOWN)


def exit_status(ended_by: int | None) -> int:
    """The process's status: 0 at the end of its input, 128 + n when signal n ended it."""
    return 128 + ended_by if ended_by else 0


@contextlib.contextmanager
def _ended_by_signals(signalled: asyncio.Event) -> Iterator[list[int]]:
    """While inside, SIGTERM and SIGHUP set `signalled` (once: the next one ends the process as
    the signal's default action does). Yields the list of the signals taken."""
    loop = asyncio.get_running_loop()
    taken: list[int] = []

    def end(number: int) -> None:
        taken.append(number)
        for each in _ENDING:  # a second signal is not waited on
            loop.remove_signal_handler(each)
        signalled.set()  # nothing once serving has ended: the sessions are closing

    handled = []
    for number in _ENDING:
        # Not on the main thread (ValueError, RuntimeError) or on a loop without signal
        # handlers (NotImplementedError): the signal keeps its default action, as before.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(number, end, number)
            handled.append(number)
    try:
        yield taken
    finally:
        if not taken:
            for number in handled:
                loop.remove_signal_handler(number)


def stdio_problem() -> str | None:
    """Why stdin and stdout cannot carry a protocol, if they cannot: the event loop reads and
    writes only pipes, sockets and terminals (`moot acp` with stdin from `/dev/null` hung for
    good, from a file it ended in a traceback)."""
    for name, fd, devices in (("standard input", 0, False), ("standard output", 1, True)):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return f"{name} is closed"
        if _is_pipe(mode) or os.isatty(fd):
            continue
        if devices and stat.S_ISCHR(mode):
            continue  # written to as a pipe is (`/dev/null`)
        return f"{name} is a file, not a pipe"
    return None


def _is_pipe(mode: int) -> bool:
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PipeLines:
    """The lines of a pipe, read on the event loop (a cancellation stops the read at once).

    Args:
        reader: The pipe's stream.
    """

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end: the last line, maybe cut short
            line = exc.partial
        except asyncio.LimitOverrunError:
            await self._drop_line()
            return TOO_LONG
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    async def _drop_line(self) -> None:
        """Drop the rest of a line longer than `READ_LIMIT`, its end included, a buffer at a
        time."""
        while True:
            try:
                await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError:
                return  # the end of the input: the next read says so
            except asyncio.LimitOverrunError as exc:  # held, up to the line's end if found
                await self._discard(exc.consumed)
                continue
            return

    async def _discard(self, size: int) -> None:
        """Drop `size` bytes the reader holds, a piece at a time: read at once, they were
        copied whole (up to twice `READ_LIMIT`) beside the buffer they came from."""
        while size > 0:
            size -= len(await self._reader.readexactly(min(size, DROPPED_PIECE)))


async def stdin_lines() -> PipeLines | None:
    """stdin's lines read on the loop, stdin itself then pointed at `/dev/null` (what runs in
    this process reads no message); None when stdin is not a pipe or a socket (the loop cannot
    watch a file or `/dev/null`)."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return None
    if not _is_pipe(mode):
        return None
    wire = os.dup(0)
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, 0)
    os.close(nothing)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    pipe = os.fdopen(wire, "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return PipeLines(reader)


async def stdio_pipes() -> tuple[PipeLines, PipeWriter] | None:
    """stdin's lines and stdout's writer, both on the loop (`stdin_lines`, `stdout_writer`);
    None, with neither touched, unless both are pipes or sockets."""
    for fd in (0, 1):
        try:
            if not _is_pipe(os.fstat(fd).st_mode):
                return None
        except OSError:
            return None
    lines, wire = await stdin_lines(), await stdout_writer()
    return (lines, wire) if lines and wire else None


class PipeWriter:
    """Text written to a pipe on the event loop: a write that waits for a client that reads
    nothing is cancelled with its task (the MCP SDK's writes, in a worker thread, held the
    process's end for good)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))
        await self._writer.drain()

    async def flush(self) -> None:
        await self._writer.drain()


async def stdout_writer() -> PipeWriter | None:
    """stdout written on the loop, stdout itself then pointed at stderr (what runs in this
    process writes nothing on the wire); None when stdout is not a pipe or a socket."""
    try:
        mode = os.fstat(1).st_mode
    except OSError:
        return None
    if not _is_pipe(mode):
        return None
    wire = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # stderr closed
        nothing = os.open(os.devnull, os.O_WRONLY)
        os.dup2(nothing, 1)
        os.close(nothing)
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(wire, "wb", buffering=0)
    # The stream protocol that lets `drain` wait for the pipe (what asyncio's own streams use).
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    return PipeWriter(asyncio.StreamWriter(transport, protocol, None, loop))
