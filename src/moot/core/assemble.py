"""Assemble a stream of provider deltas into one model turn."""

from __future__ import annotations

import json
from collections.abc import Container

import msgspec

from moot.protocol.messages import Thinking, ToolCall, Usage
from moot.providers.base import (
    Delta,
    Finish,
    TextPart,
    ThinkingPart,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)


class _PartialCall(msgspec.Struct):
    id: str
    name: str
    text: list[str] = []


def parse_call(call_id: str, name: str, text: str) -> ToolCall:
    """A tool call from its argument text; text that is not a JSON object is kept, not raised.

    A model that emits broken JSON gets a tool error it can read and correct, never a crash.
    """
    if not text.strip():
        return ToolCall(id=call_id, name=name)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        error = f"arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    else:
        if isinstance(value, dict):
            return ToolCall(id=call_id, name=name, arguments=value)
        error = f"arguments must be a JSON object, got {type(value).__name__}"
    return ToolCall(id=call_id, name=name, arguments_error=error, raw_arguments=text)


class TurnBuilder:
    """Collects one model turn's deltas; `has_output` tells whether anything arrived."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._thinking: list[ThinkingPart] = []
        self._calls: dict[int, _PartialCall] = {}
        self.usage = Usage()
        self.cost_usd: float | None = None
        self.finish_reason: str | None = None

    def add(self, delta: Delta) -> None:
        match delta:
            case TextPart(text):
                self._text.append(text)
            case ThinkingPart():
                self._thinking.append(delta)
            case ToolCallStart(index, call_id, name):
                self._calls[index] = _PartialCall(call_id, name)
            case ToolCallArgs(index, text):
                self._calls[index].text.append(text)
            case UsageReport(usage, cost):
                self.usage = self.usage + usage
                if cost is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + cost
            case Finish(reason):
                self.finish_reason = reason

    @property
    def has_output(self) -> bool:
        return bool(self._text or self._thinking or self._calls)

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def thinking(self) -> tuple[Thinking, ...]:
        """Consecutive thinking pieces merged into blocks; a signature closes a block."""
        blocks: list[Thinking] = []
        pieces: list[str] = []
        for part in self._thinking:
            pieces.append(part.text)
            if part.signature is not None:
                blocks.append(Thinking(text="".join(pieces), signature=part.signature))
                pieces = []
        if pieces:
            blocks.append(Thinking(text="".join(pieces)))
        return tuple(blocks)

    def tool_calls(self, taken: Container[str]) -> tuple[ToolCall, ...]:
        """The turn's tool calls, with ids made unique against `taken` and each other.

        Providers' ids are unique already; scripts and small local models sometimes repeat
        one, and the log needs one result per id.
        """
        calls: list[ToolCall] = []
        fresh: set[str] = set()
        for index in sorted(self._calls):
            partial = self._calls[index]
            call_id = partial.id or f"call_{index}"
            while call_id in taken or call_id in fresh:
                call_id += "_"
            fresh.add(call_id)
            calls.append(parse_call(call_id, partial.name, "".join(partial.text)))
        return tuple(calls)
