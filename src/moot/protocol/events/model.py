"""Events of the model: its answer as it streams, the turn it completed, what it cost, and
what a turn gate made of it."""

from __future__ import annotations

from typing import Literal

from moot.protocol.events.base import EventBase
from moot.protocol.messages import Thinking, ToolCall, Usage


class TextDelta(EventBase, tag="text_delta", frozen=True):
    """A piece of the model's answer as it streams."""

    text: str


class ThinkingDelta(EventBase, tag="thinking_delta", frozen=True):
    """A piece of the model's reasoning as it streams."""

    text: str


class ModelResponded(EventBase, tag="model_responded", frozen=True):
    """A complete model turn: the decision the loop acts on."""

    model: str
    text: str = ""
    thinking: tuple[Thinking, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    """The provider's own reason for ending the turn (`end_turn`, `tool_use`, `length`, ...)."""
    partial: bool = False
    """The stream broke after this much arrived; the run fails with provider_error."""


class UsageRecorded(EventBase, tag="usage", frozen=True):
    """Tokens and cost of one model call."""

    model: str
    usage: Usage
    cost_usd: float = 0.0


class GateDecided(EventBase, tag="gate_decided", frozen=True):
    """A turn gate changed what happens to the model turn just received."""

    action: Literal["replace", "retry", "stop"]
    text: str = ""
    """replace: the new answer text; retry: the feedback to the model; stop: the result."""
    tool_calls: tuple[ToolCall, ...] = ()
    """replace: the new tool calls."""
