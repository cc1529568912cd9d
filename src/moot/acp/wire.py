"""How `moot acp` reads and writes its editor's messages: one JSON object a line on stdin and
stdout, read and written on the event loop (`moot.frontend.served`), handed to the SDK as its
message-level `Transport`.

The SDK's own stdio reader gathered a line whole however long (its reader's limit only cut it
in pieces: a 200 MB line took 447 MB), and logged a full traceback for every line that did not
parse, so anything on the pipe could fill the editor's log. Here a line over `READ_LIMIT` is
dropped to its end in bounded memory, a line that is not a JSON object is one short line on
stderr (the first `NOTED`, then only at each power of ten of their count), and the next message
is read either way. As with the SDK, such a line gets no answer: it has no id to answer. A
notification the SDK cannot handle (an unknown method) was a traceback too: it is one short
line as well (`BriefNotificationErrors`).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, TextIO

from moot.frontend.served import PipeLines, PipeWriter, stdio_pipes

NOTED = 10
"""How many of a kind (unreadable lines, failed notifications) are each told on stderr; after
them, only every power of ten of their count."""
SHOWN = 80
"""How much of an unreadable line (of an error) its note shows."""
_SDK_NOTIFICATION_ERROR = "Unhandled error while handling notification"
"""How the SDK's log of a notification it could not handle begins (`acp.connection`)."""


class Notes:
    """Short lines on stderr about what moot ignores of what came on the pipe: the first
    `NOTED` each, then only at each power of ten of their count.

    Args:
        kind: What is counted, in the plural ("lines that are not JSON-RPC messages").
        out: Where they are told (stderr when None).
    """

    def __init__(self, kind: str, out: TextIO | None = None) -> None:
        self.kind = kind
        self.out = out
        self.count = 0

    def tell(self, what: str) -> None:
        """Count one more, and tell `what` of it while they are few."""
        self.count += 1
        if self.count <= NOTED:
            line = f"moot acp: {what}"
        elif str(self.count).strip("0") == "1":  # 100, 1000, ...
            line = f"moot acp: {self.count} {self.kind} so far"
        else:
            return
        out = self.out or sys.stderr
        out.write(line + "\n")
        out.flush()


class LineTransport:
    """The SDK's `Transport` (messages, not bytes) over moot's own pipe reader and writer.

    Args:
        lines: The editor's lines (stdin).
        wire: Where the answers go (stdout).
        notes: Where unreadable lines are told (stderr when None).
    """

    def __init__(self, lines: PipeLines, wire: PipeWriter, notes: TextIO | None = None) -> None:
        self._lines = lines
        self._wire = wire
        self.unreadable = Notes("lines that are not JSON-RPC messages ignored", notes)

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
                shown = repr(_cut(text))
                self.unreadable.tell(f"ignored a line that is not a JSON-RPC message: {shown}")
                continue
            return message
        return None

    async def close(self) -> None:
        """Nothing to let go: each send waited for its write."""


class BriefNotificationErrors(logging.Filter):
    """The SDK's log of a notification it could not handle (an unknown method, params that do
    not validate), as one short line (`Notes`), not its traceback: a notification has no
    answer, and anything on the pipe could send them by the thousand. Put on the root logger,
    which the SDK logs to."""

    def __init__(self, notes: TextIO | None = None) -> None:
        super().__init__()
        self.failed = Notes("notifications that failed", notes)

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(_SDK_NOTIFICATION_ERROR):
            return True
        exc = record.exc_info[1] if record.exc_info else None
        why = f"{type(exc).__name__}: {exc}" if exc else "an error"
        self.failed.tell(f"{_cut(record.getMessage())}: {_cut(why)}")
        return False


def _cut(text: str) -> str:
    one = " ".join(text.split())
    return one[:SHOWN] + ("..." if len(one) > SHOWN else "")


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
