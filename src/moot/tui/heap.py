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

THRESHOLDS = (2_000, 10, 100)
"""`gc.set_threshold`'s (CPython's: 700, 10, 10). Measured with a 10,000-token answer streaming
(`benchmarks/app_speed.py`): the default collected the oldest generation 15 times in 10 s
(~100 ms each, even frozen); these, never, and the young ones at most ~16 ms. A youngest
generation of 10,000 made its collections up to ~100 ms."""


def settle(*, collect: bool = False) -> None:
    """Freeze what the heap holds now, first collecting it when `collect` (after a switch)."""
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def release() -> None:
    """Let the frozen objects be collected again (the session shown is about to go)."""
    gc.unfreeze()
