"""Limits: what a run may spend, checked before the next model call or tool.

Budgets are shared downward: every call in a run (the person's first agent and every peer it
calls, at any depth) spends from the one `RunTotals` of that run, so delegation cannot escape
them. Loop detectors (repeated calls, no progress, consecutive errors) are per call.
"""

from __future__ import annotations

import time

import msgspec

from moot.protocol.messages import Usage
from moot.protocol.states import StopReason


class Limits(msgspec.Struct, frozen=True):
    """Bounds on one run. None switches a bound off."""

    max_turns: int | None = 100
    """Model turns across every call of the run."""
    max_wall_seconds: float | None = None
    """Wall time of the run, counting only time a process was working on it."""
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None
    max_repeated_tool_calls: int | None = 5
    """Identical tool calls (name and arguments) allowed in a row; the next one stops the run."""
    no_progress_window: int | None = 8
    """Stop after this many steps in a row that each repeat a step seen within the window."""
    max_consecutive_errors: int | None = 5
    """Tool steps in a row whose every call failed, before the run stops (a failed model call
    ends the turn at once, with `provider_error`)."""
    max_call_depth: int = 5
    """How deep peer calls may nest; a call beyond it stops at once."""
    max_gate_retries: int = 3
    max_background_agents: int = 8
    """Background agents of one session (every run of it) alive at once; another spawn is
    refused with an error result the model reads."""
    """Turn-gate retries of one model turn before the turn is taken as it is."""
    compact_at: float | None = 0.8
    """Compact the conversation when the next request would pass this share of the model's
    context window (None: never compact on its own; an overflow still compacts)."""

    def as_dict(self) -> dict[str, float | int | None]:
        return msgspec.structs.asdict(self)


class RunTotals(msgspec.Struct):
    """What a run has spent so far; one per run, shared by all its calls."""

    turns: int = 0
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float = 0.0
    elapsed_before: float = 0.0
    """Seconds spent on this run by earlier processes (before a resume)."""
    _started: float = msgspec.field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        return self.elapsed_before + (time.monotonic() - self._started)


class LimitReached(Exception):
    """A limit stops the run; carries the stop reason and a sentence for people."""

    def __init__(self, reason: StopReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _over(value: float, bound: float | None) -> bool:
    return bound is not None and value >= bound


def check_spend(limits: Limits, totals: RunTotals) -> None:
    """Raise LimitReached when the run's shared spending is used up."""
    u = totals.usage
    checks = (
        (StopReason.MAX_WALL_TIME, totals.elapsed, limits.max_wall_seconds, "seconds"),
        (StopReason.MAX_INPUT_TOKENS, u.input_tokens, limits.max_input_tokens, "input tokens"),
        (StopReason.MAX_OUTPUT_TOKENS, u.output_tokens, limits.max_output_tokens, "output tokens"),
        (StopReason.MAX_TOTAL_TOKENS, u.total_tokens, limits.max_total_tokens, "tokens"),
        (StopReason.MAX_COST, totals.cost_usd, limits.max_cost_usd, "USD"),
    )
    for reason, value, bound, unit in checks:
        if _over(value, bound):
            raise LimitReached(reason, f"spent {value:g} {unit} of a limit of {bound:g}")


def check_before_model(limits: Limits, totals: RunTotals, *, errors: int, stale: int) -> None:
    """The checks before a model call: turns, spending, consecutive errors, progress."""
    if _over(totals.turns, limits.max_turns):
        raise LimitReached(StopReason.MAX_TURNS, f"took {totals.turns} of {limits.max_turns} turns")
    check_spend(limits, totals)
    if _over(errors, limits.max_consecutive_errors):
        raise LimitReached(StopReason.CONSECUTIVE_ERRORS, f"{errors} errors in a row")
    if _over(stale, limits.no_progress_window):
        raise LimitReached(
            StopReason.NO_PROGRESS, f"{stale} steps in a row repeated an earlier step"
        )
