"""The app's heap, when the process is the app's alone (`moot`, not a test that runs many).

CPython's collector scans every object that survived into the oldest generation each time it
collects it: with the app loaded (Textual, the session, the transcript shown: ~200k objects)
one such scan took 100-300 ms on the benchmark machine, an event-loop stall of that length a
few times a minute while an answer streams. Frozen once the session shows, those objects are
never scanned again (they live as long as the app anyway); and the generations are collected
less often (`THRESHOLDS`): most of what a frame allocates is gone by the next frame anyway.

What is frozen is never freed until `release`: a session switched away from is released and
collected before the next one is frozen, so at most one session's shown transcript is kept.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

Clock = Callable[[], float]

THRESHOLDS = (2_000, 10, 30)
"""`gc.set_threshold`'s (CPython's: 700, 10, 10). Measured with a 10,000-token answer streaming
(`benchmarks/app_speed.py`): the default collected the oldest generation 8-15 times in 10 s,
at up to ~130 ms each; an oldest threshold of 100 collected it about once, but then at
~300 ms (what a collection scans grows with what was made since the last one: each line
Textual renders is a `Strip` holding seven caches, and every finished paragraph widget is
garbage in cycles); 30 collects it about three times, at 90-200 ms. The young generations
take at most ~16 ms. A youngest generation of 10,000 made its collections up to ~100 ms.
Between bursts the app collects whole when it is quiet (`QuietCollector`)."""
QUIET_S = 2.0
"""How long the app must go without a session event or a key before `QuietCollector` runs a
whole collection: it may take a few hundred ms, which nobody waits for then."""
TYPING_S = 1.0
"""While keys come less than this far apart, the oldest generation is not collected (its
collections take 90-200 ms: a key typed meanwhile would show that much later)."""
HELD_AT_MOST_S = 30.0
"""The longest typing holds the oldest generation's collections off (what waits for them
grows meanwhile)."""
HELD = 1_000_000
"""The oldest generation's threshold while typing holds its collections off."""


def settle(*, collect: bool = False) -> None:
    """Freeze what the heap holds now, first collecting it when `collect` (after a switch)."""
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def release() -> None:
    """Let the frozen objects be collected again (the session shown is about to go)."""
    gc.unfreeze()


class QuietCollector:
    """Keeps the oldest generation's collections away from the moments someone waits on.

    While the person types (keys less than `TYPING_S` apart, for at most `HELD_AT_MOST_S`),
    the oldest generation is not collected; the young ones are. Once the app has been quiet
    for `QUIET_S` (no event shown, no key), it collects whole, so the oldest generation is
    mostly collected while nobody waits, not in the middle of the next answer. `touch` and
    `typed` cost a clock read; one timer at a time is armed, none once the app is idle.
    """

    def __init__(self, arm: Callable[[float, Callable[[], None]], object], clock: Clock) -> None:
        """`arm(delay, callback)` calls `callback` once after `delay` seconds (the app's
        `set_timer`); `clock` is the time now, in seconds."""
        self._arm, self._clock = arm, clock
        self._touched = self._typed = 0.0
        self._held_since: float | None = None
        self._spent = False
        """Typing held collections off for `HELD_AT_MOST_S`: no more until keys pause."""
        self._armed = False

    def touch(self) -> None:
        """Something showed (an event, streamed text)."""
        self._touched = self._clock()
        self._arm_once(QUIET_S)

    def typed(self) -> None:
        """A key reached the prompt."""
        now = self._touched = self._typed = self._clock()
        if self._held_since is None and not self._spent:
            self._held_since = now
            gc.set_threshold(THRESHOLDS[0], THRESHOLDS[1], HELD)
        elif self._held_since is not None and now - self._held_since > HELD_AT_MOST_S:
            self._let_go()
            self._spent = True
        self._arm_once(TYPING_S)

    def _arm_once(self, delay: float) -> None:
        if not self._armed:
            self._armed = True
            self._arm(delay, self._fire)

    def _let_go(self) -> None:
        self._held_since = None
        gc.set_threshold(*THRESHOLDS)

    def _fire(self) -> None:
        now = self._clock()
        if now - self._typed >= TYPING_S:  # the keys paused
            self._spent = False
            if self._held_since is not None:
                self._let_go()
        quiet = now - self._touched
        if quiet >= QUIET_S:
            self._armed = False
            gc.collect()
            return
        # Touched since it was armed: wait out the rest (or the typing hold's end).
        wait = QUIET_S - quiet
        if self._held_since is not None:
            wait = min(wait, TYPING_S - (now - self._typed))
        self._arm(max(wait, 0.0), self._fire)
