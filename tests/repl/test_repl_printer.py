"""The REPL's printer: a line goes out at once, not at the next tick (the session's line
waited for it, ~50 ms on average, issue 31); lines above a running prompt still batch at most
`HZ` times a second (`tests/repl/test_repl.py` streams through it).

Every wait here is a turn of the event loop or the printer's own `stop`, never a clock."""

from __future__ import annotations

import asyncio
import io

from moot.repl.printer import Printer


async def _turns(times: int = 5) -> None:
    for _ in range(times):
        await asyncio.sleep(0)  # a turn of the loop, not a wait on the clock


async def test_a_line_goes_out_at_once_not_at_the_next_tick() -> None:
    """Fails on the old code: every line waited for the next tick."""
    stream = io.StringIO()
    printer = Printer(stream, clock=lambda: 100.0)
    printer.start()
    printer.write("session ses_1\n")
    await _turns()
    assert stream.getvalue() == "session ses_1\n"
    printer.write("one\n")
    printer.write("two\n")
    await printer.stop()
    assert stream.getvalue() == "session ses_1\none\ntwo\n"
