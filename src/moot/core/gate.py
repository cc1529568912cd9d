"""Turn gates: a library user's callback that sees each completed model turn.

The gate runs after a model turn is recorded and before any of its tools run. It returns
`GateDecision.proceed()` (or None), `replace(...)`, `retry(feedback)` or `stop(result)`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

import msgspec

from moot.protocol.messages import ToolCall, Usage


class ModelTurn(msgspec.Struct, frozen=True):
    """What a gate sees: one completed model turn and what the run has spent so far."""

    agent: str
    call_id: str
    text: str
    tool_calls: tuple[ToolCall, ...]
    turns: int
    usage: Usage
    cost_usd: float


class GateDecision(msgspec.Struct, frozen=True):
    action: Literal["continue", "replace", "retry", "stop"]
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()

    @classmethod
    def proceed(cls) -> GateDecision:
        """Take the turn as it is."""
        return cls("continue")

    @classmethod
    def replace(cls, text: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> GateDecision:
        """Act on this answer instead of the model's (it is what the log and model keep)."""
        return cls("replace", text, tuple(tool_calls))

    @classmethod
    def retry(cls, feedback: str) -> GateDecision:
        """Reject the turn; the model is asked again with `feedback` as a user message."""
        return cls("retry", feedback)

    @classmethod
    def stop(cls, result: str) -> GateDecision:
        """End the run now with `result` as its output (stop reason gate_stopped)."""
        return cls("stop", result)


TurnGate = Callable[[ModelTurn], GateDecision | Awaitable[GateDecision | None] | None]
