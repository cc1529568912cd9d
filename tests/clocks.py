"""A clock the test moves (not a test module): an approval's grace period, ctrl+c twice, with
no sleep."""

from __future__ import annotations


class Clock:
    """Reads `now`, which only `advance` (or the test) moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
