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
that thread before it lets go. `stdin_lines` reads stdin on the event loop instead.
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


async def serve_until_ended(
    serving: Awaitable[None], close: Callable[[], Awaitable[None]]
) -> int | None:
    """Await `serving` until it ends (None) or a SIGTERM or SIGHUP ends moot (the signal's
    number); `close` runs either way, so the sessions close and what they started ends."""
    served = asyncio.ensure_future(serving)  # a signal cancels this, never the close after it
    with _ended_by_signals(served) as taken:
        try:
            await served
        except asyncio.CancelledError:
            if not taken:
                raise
        finally:
            await close()
    return taken[0] if taken else None


def exit_status(ended_by: int | None) -> int:
    """The process's status: 0 at the end of its input, 128 + n when signal n ended it."""
    return 128 + ended_by if ended_by else 0


@contextlib.contextmanager
def _ended_by_signals(task: asyncio.Future[None]) -> Iterator[list[int]]:
    """While inside, SIGTERM and SIGHUP cancel `task` (once: the next one ends the process as
    the signal's default action does). Yields the list of the signals taken."""
    loop = asyncio.get_running_loop()
    taken: list[int] = []

    def end(number: int) -> None:
        taken.append(number)
        for each in _ENDING:  # a second signal is not waited on
            loop.remove_signal_handler(each)
        task.cancel()  # nothing once it has ended: the sessions are closing

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
                await self._reader.readexactly(exc.consumed)
                continue
            return


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
