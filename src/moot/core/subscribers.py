"""Who hears a session's events as they are published: its streams, then its listeners."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from moot.protocol import events as ev
from moot.protocol.subscription import Subscription


class Subscribers:
    """The session's live streams (`Subscription`s, one per subscriber) and its listeners.

    A stream never blocks the runtime (`Subscription.put` queues, merging deltas past its high
    water); a listener is called in the runtime's own step, after every stream has the event.
    """

    def __init__(self) -> None:
        self._streams: list[Subscription] = []
        self.listeners: list[Callable[[ev.Event], None]] = []
        """Called with each event as it is published, in the runtime's own step (the Python
        API's `on_message` answers an agent before its next step through this)."""

    def add(self, replay: Iterable[ev.Event]) -> Subscription:
        """A new stream: `replay` first, then every event published from now on."""
        subscription = Subscription(replay, on_close=self._remove)
        self._streams.append(subscription)
        return subscription

    def publish(self, event: ev.Event) -> None:
        """Hand `event` to every stream, then to every listener."""
        for subscription in self._streams:
            subscription.put(event)
        # After every subscriber has it: an event a listener causes comes after it everywhere.
        for listener in self.listeners:
            listener(event)

    def end(self) -> None:
        """End every stream (the session shut down, or its store failed)."""
        for subscription in self._streams:
            subscription.end()
        self._streams.clear()

    def _remove(self, subscription: Subscription) -> None:
        if subscription in self._streams:
            self._streams.remove(subscription)
