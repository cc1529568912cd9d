"""An incremental server-sent-events decoder (the WHATWG "event stream" format).

Hand-written rather than taken from a library because the providers need two things the small
libraries do not give: feeding raw byte chunks as they arrive (a chunk may end mid-line or
mid-character), and telling a cleanly ended stream from one cut off mid-event.
"""

from __future__ import annotations

import msgspec


class ServerSentEvent(msgspec.Struct, frozen=True):
    event: str
    """The event type; "message" when the server named none."""
    data: str
    id: str | None = None


class SSEDecoder:
    """Feed bytes, get complete events. `pending` tells whether an event was cut off."""

    __slots__ = ("_buffer", "_data", "_event", "_id")

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None

    @property
    def pending(self) -> bool:
        """True when bytes or fields of an unfinished event are waiting for more input."""
        return bool(self._buffer or self._data or self._event)

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        buffer = self._buffer + chunk
        events: list[ServerSentEvent] = []
        start = 0
        while True:
            # Lines end in \n, \r\n or \r; find the nearest terminator.
            nl = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start, nl if nl != -1 else len(buffer))
            if cr != -1:
                if cr + 1 == len(buffer):
                    break  # a \r at the very end may be half of \r\n: wait for more
                end, step = cr, 2 if buffer[cr + 1 : cr + 2] == b"\n" else 1
            elif nl != -1:
                end, step = nl, 1
            else:
                break
            line = buffer[start:end].decode("utf-8", errors="replace")
            start = end + step
            if not line:
                if self._data:
                    events.append(
                        ServerSentEvent(self._event or "message", "\n".join(self._data), self._id)
                    )
                self._data, self._event = [], ""
                continue
            self._field(line)
        self._buffer = buffer[start:]
        return events

    def finish(self) -> list[ServerSentEvent]:
        """The stream ended: a final lone \r still ends its line. Check `pending` afterwards."""
        return self.feed(b"\n") if self._buffer.endswith(b"\r") else []

    def _field(self, line: str) -> None:
        if line.startswith(":"):
            return  # a comment (servers send them as keep-alives)
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
