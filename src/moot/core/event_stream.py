"""A run's events for either kind of caller: `async for` in a coroutine, `for` in plain code.

`moot.stream(...)` returns an `EventStream`. Iterated with `for`, the run goes on in a thread of
its own with its own event loop, which hands each event over as it is stored; leaving the loop
early (a `break`, an exception) cancels the run there, as closing the async iterator does, and
waits for it to record its end.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Generic, TypeVar

Item = TypeVar("Item")


class EventStream(Generic[Item]):
    """What `make` yields, to `async for` or to `for`.

    Args:
        make: Starts the run and returns its async iterator; called once per iteration.
    """

    def __init__(self, make: Callable[[], AsyncIterator[Item]]) -> None:
        self._make = make
        self._running: AsyncIterator[Item] | None = None

    def __aiter__(self) -> EventStream[Item]:
        return self

    async def __anext__(self) -> Item:
        if self._running is None:
            self._running = self._make()
        return await self._running.__anext__()

    async def aclose(self) -> None:
        """End the run early (as leaving an `async for` over it does)."""
        closing = getattr(self._running, "aclose", None)
        if closing is not None:
            await closing()

    def __iter__(self) -> Iterator[Item]:
        return _in_a_thread(self._make)


def _in_a_thread(make: Callable[[], AsyncIterator[Item]]) -> Iterator[Item]:
    """Run `make`'s iterator on an event loop in another thread, handing its items over."""
    handed: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
    started = threading.Event()
    running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[object]]] = []

    async def pump() -> None:
        task = asyncio.current_task()
        assert task is not None
        running.append((asyncio.get_running_loop(), task))
        started.set()
        items = make()
        try:
            async for item in items:
                handed.put(("item", item))
        finally:
            closing = getattr(items, "aclose", None)
            if closing is not None:
                await closing()

    def work() -> None:
        try:
            asyncio.run(pump())
        except asyncio.CancelledError:
            pass  # the caller left early
        except BaseException as exc:  # told to the caller, in its own thread
            handed.put(("error", exc))
        finally:
            started.set()
            handed.put(("end", None))

    thread = threading.Thread(target=work, name="moot-stream", daemon=True)
    thread.start()
    try:
        while True:
            kind, value = handed.get()
            if kind == "item":
                yield value  # type: ignore[misc]
            elif kind == "error":
                raise value  # type: ignore[misc]
            else:
                return
    finally:
        started.wait()
        if thread.is_alive() and running:
            loop, task = running[0]
            loop.call_soon_threadsafe(task.cancel)
        thread.join()
