"""How a front end that serves a client on stdio (`moot acp`, `moot mcp serve`) ends: at the end
of its input, and just as well when a signal asks it to.

A SIGTERM or SIGHUP (an editor that stops its agent, a terminal that went away) killed either
at once, by the signal's default action: their sessions never closed, so a command running in
the sandbox lived on (Landlock), a Docker container kept running and the sandbox's temporary
directories stayed. `ended_by_signals` turns the first such signal into the cancellation of
the serving task, whose `finally` closes the session; a second one ends the process at once.

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
from collections.abc import Iterator

_ENDING = (signal.SIGTERM, signal.SIGHUP)
READ_LIMIT = 64 << 20
"""The longest line a client may send."""


@contextlib.contextmanager
def ended_by_signals() -> Iterator[list[int]]:
    """While inside, SIGTERM and SIGHUP cancel the current task (once: the next one ends the
    process as the signal's default action does). Yields the list of the signals taken."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    taken: list[int] = []

    def end(number: int) -> None:
        taken.append(number)
        for each in _ENDING:  # a second signal is not waited on
            loop.remove_signal_handler(each)
        if task is not None:
            task.cancel()

    handled = []
    for number in _ENDING:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(number, end, number)
            handled.append(number)
    try:
        yield taken
    finally:
        if not taken:
            for number in handled:
                loop.remove_signal_handler(number)


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
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


async def stdin_lines() -> PipeLines | None:
    """stdin's lines read on the loop, stdin itself then pointed at `/dev/null` (what runs in
    this process reads no message); None when stdin is not a pipe or a socket (the loop cannot
    watch a file or `/dev/null`)."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
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
