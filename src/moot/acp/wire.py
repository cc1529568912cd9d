"""How `moot acp` reads and writes its editor's messages: one JSON object a line on stdin and
stdout, read and written on the event loop (`moot.frontend.served`), handed to the SDK as its
message-level `Transport`.

The SDK's own stdio reader gathered a line whole however long (its reader's limit only cut it
in pieces: a 200 MB line took 447 MB), and logged a full traceback for every line that did not
parse, so anything on the pipe could fill the editor's log. Here a line over `READ_LIMIT` is
dropped to its end in bounded memory, a line that is not a JSON object is one short line on
stderr (the first `NOTED`, then only at each power of ten of their count), and the next message
is read either way. As with the SDK, such a line gets no answer: it has no id to answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from moot.frontend.served import PipeLines, PipeWriter, stdio_pipes

NOTED = 10
"""How many unreadable lines are each told on stderr; after them, only every power of ten."""
SHOWN = 80
"""How much of an unreadable line its note shows."""


class LineTransport:
    """The SDK's `Transport` (messages, not bytes) over moot's own pipe reader and writer.

    Args:
        lines: The editor's lines (stdin).
        wire: Where the answers go (stdout).
        notes: Where unreadable lines are told (stderr).
    """

    def __init__(self, lines: PipeLines, wire: PipeWriter, notes: TextIO | None = None) -> None:
        self._lines = lines
        self._wire = wire
        self._notes = notes
        self.unreadable = 0

    async def send(self, message: dict[str, Any]) -> None:
        # One write a message: the writes of concurrent tasks do not interleave.
        await self._wire.write(json.dumps(message, separators=(",", ":")) + "\n")

    async def receive(self) -> dict[str, Any] | None:
        """The next message; None at the end of the input."""
        async for line in self._lines:
            text = line.strip()
            if not text:
                continue
            message = _parsed(text)
            if message is None:
                self._note(text)
                continue
            return message
        return None

    async def close(self) -> None:
        """Nothing to let go: each send waited for its write."""

    def _note(self, text: str) -> None:
        self.unreadable += 1
        count = self.unreadable
        notes = self._notes or sys.stderr
        if count <= NOTED:
            shown = text[:SHOWN] + ("..." if len(text) > SHOWN else "")
            notes.write(f"moot acp: ignored a line that is not a JSON-RPC message: {shown!r}\n")
        elif str(count).strip("0") == "1":  # 100, 1000, ...
            notes.write(f"moot acp: {count} lines that are not JSON-RPC messages ignored so far\n")
        else:
            return
        notes.flush()


def _parsed(text: str) -> dict[str, Any] | None:
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None
    return message if isinstance(message, dict) else None


async def stdio_transport() -> LineTransport | None:
    """The editor's pipes as a transport; None when stdin or stdout is a terminal (the SDK
    reads and writes it as before)."""
    pipes = await stdio_pipes()
    return LineTransport(*pipes) if pipes else None
