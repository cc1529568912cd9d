"""Writing finished lines into scrollback, above a prompt that may be showing.

Lines collect and go out together at most `HZ` times a second: each write above a running
prompt erases it, prints and draws it again, so one write per tick keeps a fast stream from
redrawing the prompt per line (and keeps the keys typed meanwhile echoing at once). A line
after a quiet spell (nothing written above the prompt for a tick) goes out at once: the
session's line, the first of an answer, never wait for the tick (~50 ms on average). The same
tick refreshes the live area. With no prompt showing, lines are written straight away.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TextIO

from prompt_toolkit.application import get_app_or_none, run_in_terminal

HZ = 10


class Printer:
    """The one way the REPL writes to the terminal.

    Args:
        stream: The terminal (stdout), or a buffer in tests.
        on_tick: Called every tick (the REPL refreshes its live area there).
        reprompt: While a prompt that draws nothing shows (a dumb terminal's, an approval's
            question), the line it left: lines printed then start on a line of their own and
            that line is written again after them. None while prompt_toolkit redraws its own.
        clock: The time now, in seconds (what tells a quiet spell); the event loop's by default.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        on_tick: Callable[[], None] = lambda: None,
        reprompt: Callable[[], str | None] = lambda: None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._stream = stream
        self._on_tick = on_tick
        self._reprompt = reprompt
        self._pending: list[str] = []
        self._ticker: asyncio.Task[None] | None = None
        self._writing: asyncio.Future[None] | None = None
        self._clock = clock
        self._soon: asyncio.Task[None] | None = None
        self._written_at = float("-inf")
        """The loop's time of the last write to the terminal."""

    def write(self, text: str) -> None:
        """Queue finished lines: at once after a quiet spell, else the next tick writes them."""
        self._pending.append(text)
        if self._ticker is None or self._writing is not None or self._soon is not None:
            return
        if self._now() - self._written_at >= 1 / HZ:
            self._soon = self._ticker.get_loop().create_task(self._write_soon())

    def _now(self) -> float:
        if self._clock is not None:
            return self._clock()
        return self._ticker.get_loop().time() if self._ticker is not None else 0.0

    async def _write_soon(self) -> None:
        try:
            await self.flush()
        finally:
            self._soon = None

    def start(self) -> None:
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        if self._soon is not None:  # a write under way ends first
            await self._soon
        await self.flush()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1 / HZ)
            self._on_tick()
            if self._pending and self._writing is None:
                await self.flush()

    async def flush(self) -> None:
        """Write what is queued now, above the prompt if one shows."""
        while self._writing is not None:
            await self._writing
        if not self._pending:
            return
        app = get_app_or_none()
        if app is None or not app.is_running:
            self._out()
            return
        self._writing = asyncio.get_running_loop().create_future()
        self._written_at = self._now()  # above the prompt: it is erased and drawn again
        try:
            await run_in_terminal(self._out)
        finally:
            self._writing.set_result(None)
            self._writing = None

    def _out(self) -> None:
        text, self._pending = "".join(self._pending), []
        if not text:
            return
        app = get_app_or_none()
        again = self._reprompt() if app is not None and app.is_running else None
        if again is not None:
            text = "\n" + text + again
        self._stream.write(text)
        self._stream.flush()
