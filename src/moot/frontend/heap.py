"""CPython's collector held off while a front end (the app, the REPL, `moot -p`) starts, in
moot's own process.

Start-up builds a large, long-lived heap (the toolkit, then the session's modules and objects);
the collector scanned it again and again while it grew (~20 ms of CPU before `moot --plain`'s
session line: open 239 -> 204 ms, CPU 216 -> 193 ms, medians of 12 alternating runs; ~5 ms of
`moot -p`'s). Once the session is open, what is loaded is frozen (kept for the process's life
anyway, so later collections skip it) and the collector runs again.
"""

from __future__ import annotations

import gc


class HeldCollector:
    """The collector, held off from now until `let_go` when `held` (moot is the program)."""

    def __init__(self, *, held: bool) -> None:
        self._held = held
        if held:
            gc.disable()

    def let_go(self) -> None:
        """Freeze the heap and collect again (once; later calls do nothing)."""
        if self._held:
            self._held = False
            gc.freeze()
            gc.enable()
