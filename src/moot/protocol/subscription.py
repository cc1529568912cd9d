"""A subscription to a session's events: from any `seq`, the stored log first, then live, with
no gap or duplicate at the seam; a subscriber never blocks the runtime (past `HIGH_WATER` queued
events its consecutive text and thinking deltas of one call merge, nothing else is dropped,
merged or reordered)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Self

from msgspec.structs import replace

if TYPE_CHECKING:
    import asyncio

    from moot.protocol.events import Event


HIGH_WATER = 256
"""Queued live events past which a subscriber counts as behind: its consecutive text and
thinking deltas are then merged, so a slow front end cannot make the queue grow with a stream."""


class Subscription:
    """One subscriber's events, in `seq` order: a replay, then live ones until the stream ends.

    The runtime never waits on a subscriber: `put` returns at once. While more than
    `high_water` live events wait, a text or thinking delta that follows one of the same kind
    in the same agent call is merged into it (the text joined, the later `seq` and time kept);
    no other event is ever dropped, merged or reordered.
    """

    def __init__(
        self,
        replay: Iterable[Event] = (),
        *,
        high_water: int = HIGH_WATER,
        on_close: Callable[[Subscription], None] | None = None,
    ) -> None:
        self._replay: deque[Event] = deque(replay)
        self._live: deque[Event] = deque()
        self._seen = self._replay[-1].seq if self._replay else 0
        self._high_water = high_water
        self._on_close = on_close
        self._ended = False
        self._wakeup: asyncio.Event | None = None
        self.merged = 0
        """How many deltas were merged into earlier ones because this subscriber fell behind."""

    @property
    def pending(self) -> int:
        """Events waiting to be taken (replayed and live)."""
        return len(self._replay) + len(self._live)

    def put(self, event: Event) -> None:
        """Queue a live event; never blocks. Events at or before the replay's end are skipped:
        the replay already holds them."""
        if self._ended or (event.seq and event.seq <= self._seen):
            return
        live = self._live
        if len(live) >= self._high_water and live and _mergeable(live[-1], event):
            last = live[-1]
            live[-1] = replace(last, text=last.text + event.text, seq=event.seq, ts=event.ts)  # type: ignore[union-attr]
            self.merged += 1
        else:
            live.append(event)
        self._wake()

    def end(self) -> None:
        """No more events will come; iteration ends once the queued ones are taken."""
        self._ended = True
        self._wake()

    def close(self) -> None:
        """Stop receiving: queued events are dropped and the runtime forgets this subscriber."""
        self._replay.clear()
        self._live.clear()
        self.end()
        if self._on_close is not None:
            self._on_close(self)
            self._on_close = None

    def _wake(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        while True:
            if self._replay:
                return self._replay.popleft()
            if self._live:
                event = self._live.popleft()
                self._seen = max(self._seen, event.seq)
                return event
            if self._ended:
                raise StopAsyncIteration
            if self._wakeup is None:
                import asyncio  # here: `moot sessions list` reads the contract, runs no loop

                self._wakeup = asyncio.Event()
            self._wakeup.clear()
            await self._wakeup.wait()


_MERGEABLE_KINDS = frozenset({"text_delta", "thinking_delta"})


def _mergeable(last: Event, event: Event) -> bool:
    return (
        type(event) is type(last)
        and event.kind in _MERGEABLE_KINDS
        and last.call_id == event.call_id
        and last.submission_id == event.submission_id
    )
