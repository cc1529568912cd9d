"""`EarlyOpening`: a front end's session, opened in a thread from the moment the front end knows
which one to open, so that it opens while the front end's own toolkit loads.

Opening a session waits on the disk and on subprocesses (the sessions database, the sandbox's
probe, git) for a good part of its time; begun before prompt_toolkit or Textual load rather
than after, those waits overlap the imports instead of following them. The front end calls it
where it would have opened the session itself, and gets what the thread opened (or its error);
a session it never took is closed when the front end ends (`leave`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class EarlyOpening(Generic[T]):
    """`open` run at once in a thread; calling this object returns what it opened (once: a
    second call opens another, as `open` would)."""

    def __init__(self, open: Callable[[], T]) -> None:
        self._open = open
        self._result: T | None = None
        self._error: BaseException | None = None
        self._taken = False
        self._thread = threading.Thread(target=self._run, name="moot-session-opening", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._open()
        except BaseException as exc:  # handed to the caller, in its thread
            self._error = exc

    def __call__(self) -> T:
        """What the thread opened (waiting for it), or raise what it raised."""
        if self._taken:
            return self._open()
        self._thread.join()
        self._taken = True
        error, self._error = self._error, None
        if error is not None:
            raise error
        assert self._result is not None
        return self._result

    def leave(self, close: Callable[[T], None]) -> None:
        """The front end ends: a session opened and never taken is closed with `close` (one
        still opening is waited for, so it is not left half made)."""
        if self._taken:
            return
        self._thread.join()
        self._taken = True
        if self._result is not None:
            close(self._result)
