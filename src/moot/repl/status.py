"""The status toolbar's facts (model, mode, context used, cost), kept current from events."""

from __future__ import annotations

import msgspec

from moot.protocol import events as ev
from moot.protocol.client import SessionStatus


class StatusFacts(msgspec.Struct):
    """What the toolbar shows."""

    model: str = ""
    mode: str | None = None
    context_window: int | None = None
    context_tokens: int = 0
    """Tokens the person's agent sent in its last request: how full its context is."""
    cost_usd: float = 0.0
    running: bool = False

    @classmethod
    def of(cls, status: SessionStatus) -> StatusFacts:
        return cls(
            model=status.model,
            mode=status.mode,
            context_window=status.context_window,
            running=status.running,
        )

    def take(self, event: ev.Event) -> None:
        match event:
            case ev.ModeChanged():
                self.mode = event.mode
            case ev.UsageRecorded():
                if not event.parent_call_id:
                    usage = event.usage
                    self.context_tokens = (
                        usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
                    )
                self.cost_usd += event.cost_usd
            case ev.TurnStarted():
                self.running = True
            case ev.TurnFinished():
                self.running = False

    def line(self, working: str = "") -> str:
        """`model · mode · ctx 12% · $0.0042`, and while a turn runs what it does (`working`,
        `TurnProgress.line`) and what ctrl+c does."""
        parts = [self.model or "no model", self.mode or "no modes"]
        if self.context_window:
            parts.append(f"ctx {100 * self.context_tokens / self.context_window:.0f}%")
        parts.append(f"${self.cost_usd:.4f}")
        if self.running:
            parts.append(f"{working or 'running'}: ctrl+c stops it")
        return " · ".join(parts)
