"""The one bridge between a session and the app: a worker that takes the client's events and
posts them as Textual messages.

Text and thinking deltas are coalesced: they collect per agent call and go out at most
`FLUSH_HZ` times a second (Textual's Markdown falls behind at ~20 appends a second, and every
message costs a trip through the event loop). Any other event first flushes what collected, so
the order the person sees is the order of the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.message import Message

from moot.protocol import events as ev
from moot.protocol.client import Client
from moot.protocol.subscription import Subscription
from moot.tui.messages import SessionEvent, Streamed

FLUSH_HZ = 30


class EventBridge:
    """Pumps one subscription into `post` (the app's `post_message`)."""

    def __init__(self, client: Client, post: Callable[[Message], object]) -> None:
        self._client = client
        self._post = post
        self._pending: dict[tuple[str, str], list[str]] = {}
        self._agents: dict[str, str] = {}
        self._depth: dict[str, int] = {}
        self._flusher: asyncio.TimerHandle | None = None
        self.last_seq = 0
        """The seq of the last event taken: where a restarted bridge would go on from."""

    def depth_of(self, call_id: str) -> int:
        """How deep `call_id` is in the call tree (0: the person's turn)."""
        return self._depth.get(call_id, 0)

    def note(self, event: ev.Event) -> None:
        """Learn the call tree from an event (also for history shown from the store)."""
        if isinstance(event, ev.TurnStarted):
            self._depth[event.call_id] = 0
        elif isinstance(event, ev.AgentCalled):
            self._depth[event.call_id] = event.depth

    async def run(self, after_seq: int | None) -> None:
        """Take events until the subscription ends (the session closed)."""
        subscription: Subscription = self._client.subscribe(after_seq)
        try:
            async for event in subscription:
                self.take(event)
        finally:
            subscription.close()
            self.flush()

    def take(self, event: ev.Event) -> None:
        self.last_seq = max(self.last_seq, event.seq)
        if isinstance(event, ev.TextDelta | ev.ThinkingDelta):
            kind = "text" if isinstance(event, ev.TextDelta) else "thinking"
            self._agents[event.call_id] = event.agent
            self._pending.setdefault((event.call_id, kind), []).append(event.text)
            if self._flusher is None:
                loop = asyncio.get_running_loop()
                self._flusher = loop.call_later(1 / FLUSH_HZ, self.flush)
            return
        self.flush()
        self.note(event)
        self._post(SessionEvent(event))

    def flush(self) -> None:
        """Send what streamed in since the last flush."""
        if self._flusher is not None:
            self._flusher.cancel()
            self._flusher = None
        pending, self._pending = self._pending, {}
        for (call_id, kind), pieces in pending.items():
            self._post(
                Streamed(
                    call_id=call_id,
                    agent=self._agents.get(call_id, ""),
                    kind=kind,
                    text="".join(pieces),
                    depth=self.depth_of(call_id),
                )
            )
