"""The Anthropic Messages API, streamed (https://docs.anthropic.com/en/api/messages-streaming).

Two things set this API apart from the others:

- Thinking blocks carry a signature and must go back unchanged in the next request, first in the
  assistant turn. A `redacted_thinking` block has no text, only opaque `data`; it travels in
  `Thinking.signature` as JSON under a marker key, so this adapter can tell it apart on the way
  back.
- Prompt caching is opt-in per block: `cache_control` marks the end of the stable prefix (the
  tools, the system prompt and the conversation so far), so each turn reads the previous turn's
  prefix from the cache and writes only what is new.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

import msgspec

from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    Message,
    Thinking,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from moot.providers.base import (
    Delta,
    Finish,
    ModelRequest,
    ProviderError,
    TextPart,
    ThinkingPart,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from moot.providers.config import ProviderConfig
from moot.providers.http import HTTPAdapter, parse_data, redact, transport_error
from moot.providers.images import LIMITS, fit

API_VERSION = "2023-06-01"

THINKING_BUDGETS = {"low": 1024, "medium": 4096, "high": 16384}
"""`budget_tokens` for each `reasoning_effort`; 1024 is the API's minimum."""

REDACTED_MARKER = "anthropic_redacted_thinking"
"""The key under which a redacted thinking block's `data` is packed into `Thinking.signature`."""

_EPHEMERAL = {"type": "ephemeral"}
_THINKING_TYPES = ("thinking", "redacted_thinking")

# The HTTP status each documented error type stands for, so an error event inside a 200 stream
# is judged retryable by the same RetryPolicy.statuses as an error status.
# https://docs.anthropic.com/en/api/errors
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider(HTTPAdapter):
    """Claude models through the Messages API."""

    def build_request(self, request: ModelRequest) -> tuple[str, dict[str, str], dict]:
        """The URL, headers and JSON body of one streamed Messages call (pure)."""
        config = self.config
        root = config.base_url.rstrip("/").removesuffix("/v1")
        headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
        if config.api_key:
            headers["x-api-key"] = config.api_key
        headers.update(config.headers)

        max_tokens, thinking = self._output_limits(request)
        body: dict[str, Any] = {"model": config.model, "max_tokens": max_tokens}
        if request.system:
            body["system"] = [{"type": "text", "text": request.system, "cache_control": _EPHEMERAL}]
        body["messages"] = convert_messages(request.messages)
        if request.tools:
            tools = [
                {"name": t.name, "description": t.description, "input_schema": dict(t.parameters)}
                for t in request.tools
            ]
            tools[-1]["cache_control"] = _EPHEMERAL
            body["tools"] = tools
        if thinking is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": thinking}
        body["stream"] = True
        return f"{root}/v1/messages", headers, body

    def _output_limits(self, request: ModelRequest) -> tuple[int, int | None]:
        """`max_tokens`, and the thinking budget when thinking was asked for and is supported."""
        info = self.config.info
        max_tokens = request.max_output_tokens or self.config.max_output_tokens or info.max_output
        budget = THINKING_BUDGETS.get(self.config.reasoning_effort or "")
        if budget is None or not info.thinking:
            return max_tokens, None
        if max_tokens <= budget:
            # Thinking counts inside max_tokens, which must exceed the budget: keep the room
            # asked for the answer on top of it, within what the model can emit.
            max_tokens = max(min(max_tokens + budget, info.max_output), budget + 1)
        return max_tokens, budget

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[Delta]:
        reader = _StreamReader(self.config)
        events = self._events(request)
        async with aclosing(events):
            async for event in events:
                if event.event == "ping":
                    continue
                for delta in reader.feed(parse_data(self.config, event)):
                    yield delta
                if reader.done:
                    break
        if not reader.done:
            raise transport_error(self.config, "the stream ended before message_stop")
        usage = reader.usage()
        yield UsageReport(usage, cost_usd=self.config.info.cost(usage))
        yield Finish(reader.stop_reason or "end_turn")


# ---- the stream ---------------------------------------------------------------------------


class _Block(msgspec.Struct):
    """A content block the stream has opened and not yet closed."""

    type: str
    tool: int = -1
    """For tool_use: the call's position among this turn's tool calls."""
    input: Any = None
    """For tool_use: the `input` of content_block_start, used if no JSON deltas follow."""
    streamed: bool = False
    signature: list[str] = []


class _StreamReader:
    """Maps the events of one streamed message to deltas, collecting usage and stop reason."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.done = False
        self.stop_reason: str | None = None
        self._usage: dict[str, int] = {}
        self._blocks: dict[int, _Block] = {}
        self._tools = 0

    def usage(self) -> Usage:
        u = self._usage
        return Usage(
            input_tokens=u.get("input_tokens", 0),
            output_tokens=u.get("output_tokens", 0),
            cache_read_tokens=u.get("cache_read_input_tokens", 0),
            cache_write_tokens=u.get("cache_creation_input_tokens", 0),
        )

    def feed(self, data: Any) -> list[Delta]:
        if not isinstance(data, dict):
            return []
        match data.get("type"):
            case "message_start":
                self._count(data.get("message", {}).get("usage"))
            case "content_block_start":
                return self._start(data.get("index", 0), data.get("content_block", {}))
            case "content_block_delta":
                return self._delta(data.get("index", 0), data.get("delta", {}))
            case "content_block_stop":
                return self._stop(data.get("index", 0))
            case "message_delta":
                self.stop_reason = data.get("delta", {}).get("stop_reason") or self.stop_reason
                self._count(data.get("usage"))  # cumulative counts: later values win
            case "message_stop":
                self.done = True
            case "error":
                raise self._error(data.get("error") or {})
        return []  # ping and event types added after this was written

    def _count(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if isinstance(v, int)})

    def _start(self, index: int, block: dict[str, Any]) -> list[Delta]:
        kind = block.get("type", "")
        opened = self._blocks[index] = _Block(kind)
        if kind == "text" and block.get("text"):
            return [TextPart(block["text"])]
        if kind == "thinking" and block.get("thinking"):
            return [ThinkingPart(block["thinking"])]
        if kind == "redacted_thinking":
            packed = json.dumps({REDACTED_MARKER: block.get("data", "")})
            return [ThinkingPart("", signature=packed)]
        if kind == "tool_use":
            opened.tool, opened.input = self._tools, block.get("input")
            self._tools += 1
            return [ToolCallStart(opened.tool, block.get("id", ""), block.get("name", ""))]
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Delta]:
        block = self._blocks.get(index)
        match delta.get("type"):
            case "text_delta" if delta.get("text"):
                return [TextPart(delta["text"])]
            case "thinking_delta" if delta.get("thinking"):
                return [ThinkingPart(delta["thinking"])]
            case "signature_delta" if block is not None:
                block.signature.append(delta.get("signature", ""))
            case "input_json_delta" if (
                block and block.type == "tool_use" and delta.get("partial_json")
            ):
                block.streamed = True
                return [ToolCallArgs(block.tool, delta["partial_json"])]
        return []

    def _stop(self, index: int) -> list[Delta]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.type == "thinking" and "".join(block.signature):
            return [ThinkingPart("", signature="".join(block.signature))]
        if block.type == "tool_use" and not block.streamed and block.input:
            return [ToolCallArgs(block.tool, json.dumps(block.input, ensure_ascii=False))]
        return []

    def _error(self, error: dict[str, Any]) -> ProviderError:
        kind = str(error.get("type", "error"))
        status = _ERROR_STATUS.get(kind)
        return ProviderError(
            redact(str(error.get("message") or kind), self.config),
            provider=self.config.provider,
            model=self.config.model,
            retryable=status is not None and status in self.config.retry.statuses,
            details={"type": kind},
        )


# ---- messages -----------------------------------------------------------------------------


def convert_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Messages API turns: roles alternate, the last block marks the cache.

    Consecutive messages of one role merge into one turn (tool results and a following user
    message become one user turn, tool results first, as the API requires).
    """
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue  # an empty turn is rejected; its neighbours merge instead
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if turns:
        # Thinking blocks cannot carry cache_control; the block before them can.
        cacheable = [b for b in turns[-1]["content"] if b["type"] not in _THINKING_TYPES]
        if cacheable:
            cacheable[-1]["cache_control"] = _EPHEMERAL
    return turns


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, UserMessage):
        return "user", [*map(_image, message.attachments), *_text(message.content)]
    if isinstance(message, ToolResultMessage):
        result = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id,
            "content": [*_text(message.content), *map(_image, message.attachments)],
            "is_error": message.is_error,
        }
        return "user", [result]
    assert isinstance(message, AssistantMessage)
    blocks = [b for b in map(_thinking, message.thinking) if b is not None]
    blocks += _text(message.content)
    blocks += [
        # Arguments that did not parse go back as {}: `input` must be an object.
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    ]
    return "assistant", blocks


def _text(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}] if text else []  # empty text blocks are rejected


def _image(attachment: Attachment) -> dict[str, Any]:
    """An image block (fitted in the API's limits), or a PDF's `document` block (both base64
    sources)."""
    attachment = fit(attachment, LIMITS["anthropic"])
    source = {"type": "base64", "media_type": attachment.mime_type, "data": attachment.data}
    if attachment.is_document:
        block: dict[str, Any] = {"type": "document", "source": source}
        if attachment.name:
            block["title"] = attachment.name
        return block
    return {"type": "image", "source": source}


def _thinking(thinking: Thinking) -> dict[str, Any] | None:
    """The block to send back, or None for thinking the API would not accept.

    Unsigned thinking (a stream cut off mid-block) and another adapter's packed JSON would be
    rejected as unverifiable; an Anthropic signature is base64 and never starts with `{`.
    """
    signature = thinking.signature
    if not signature:
        return None
    if not signature.startswith("{"):
        return {"type": "thinking", "thinking": thinking.text, "signature": signature}
    try:
        packed = json.loads(signature)
    except ValueError:
        return None
    if isinstance(packed, dict) and isinstance(packed.get(REDACTED_MARKER), str):
        return {"type": "redacted_thinking", "data": packed[REDACTED_MARKER]}
    return None
