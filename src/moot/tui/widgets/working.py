"""The working line: while a turn runs, one line between the chat and the prompt saying what
the agent does and for how long (`thinking 3s · turn 14s · ~1,240 tok`), with a spinner.

It is on screen only while a turn runs, and so is its timer (an idle app runs none): the phase
changes show at once, the seconds and the spinner four times a second. What it says is
`protocol.activity.TurnProgress`, the rule the REPL's toolbar shows too; the status line shows
the same words, without the tokens (it counts them itself).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from moot.protocol import events as ev
from moot.protocol.activity import TurnProgress
from moot.tui.widgets.tool_block import SPINNER

TICK_S = 0.25


class WorkingLine(Static):
    """What the running turn does now; hidden while none runs."""

    DEFAULT_CSS = """
    WorkingLine { height: 1; display: none; color: $text-muted; padding: 0 1; }
    WorkingLine.-working { display: block; }
    """

    def __init__(
        self,
        on_change: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        **kw: object,
    ) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self.progress = TurnProgress()
        self._clock = clock
        self._on_change = on_change
        """Told the line's words when they change (the status line shows them too)."""
        self._timer: Timer | None = None
        self._said = ""

    def take(self, event: ev.Event) -> None:
        if self.progress.apply(event, self._clock()) or isinstance(event, ev.UsageRecorded):
            self._show()

    def take_stream(self, kind: str, chars: int) -> None:
        """A batch of streamed text or thinking (the bridge coalesces deltas)."""
        if self.progress.streamed(kind == "thinking", chars, self._clock()):
            self._show()

    def _show(self) -> None:
        working = self.progress.phase is not None
        self.set_class(working, "-working")
        if working and self._timer is None:
            self._timer = self.set_interval(TICK_S, self._tick)
        elif not working and self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._paint()

    def _tick(self) -> None:
        self._paint()

    def _paint(self) -> None:
        now = self._clock()
        words = self.progress.line(now)
        if words:
            # The frame by the clock, not by ticks counted: a still clock (a snapshot) draws
            # one frame however slowly the machine runs the timer.
            frame = int(now / TICK_S) % len(SPINNER)
            line = Text(SPINNER[frame] + " ", style="bold")
            line.append(words)
            line.append("  esc stops it", style="dim")
            self.update(line)
        short = self.progress.line(now, tokens=False)  # the status line counts tokens itself
        if short != self._said:
            self._said = short
            if self._on_change is not None:
                self._on_change(short)
