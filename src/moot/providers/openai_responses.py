"""OpenAI's Responses API (`POST /v1/responses`), streamed and stateless.

Every turn sends the whole conversation (`store: false`, no `previous_response_id`), so a
session resumes from moot's own log, never from state kept on OpenAI's side. Reasoning comes
back encrypted (`include: ["reasoning.encrypted_content"]`) and rides in `Thinking.signature`
until the next turn sends it back unchanged.

Wire format: https://platform.openai.com/docs/api-reference/responses-streaming
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import Any

from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    Message,
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

_TRANSIENT_CODES = frozenset(
    {"server_error", "rate_limit_exceeded", "server_is_overloaded", "slow_down", "overloaded"}
)
"""Error codes of a failed response that another try may cure."""

_TRY_AGAIN = re.compile(r"try again in\s*(\d+(?:\.\d+)?)\s*(ms|s)\b", re.IGNORECASE)
"""Rate-limit messages carry the wait in prose: "Please try again in 1.898s"."""


class OpenAIResponsesProvider(HTTPAdapter):
    """Streams model turns from the Responses API (OpenAI, or a server that speaks it)."""

    def build_request(self, request: ModelRequest) -> tuple[str, dict[str, str], dict]:
        """The URL, headers and JSON body of one call; pure, so tests can assert it."""
        config = self.config
        info = config.info
        headers = dict(config.headers)
        if config.api_key:
            headers["authorization"] = f"Bearer {config.api_key}"
        body: dict[str, Any] = {"model": config.model}
        if request.system:
            body["instructions"] = request.system
        body["input"] = _input_items(request.messages)
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                    "strict": False,
                }
                for tool in request.tools
            ]
        body["store"] = False
        body["stream"] = True
        # Encrypted reasoning is the only way to hand a stateless call its earlier thinking.
        # Ask for it from thinking models, and from models the catalog does not know yet.
        if info.thinking or not info.known:
            body["include"] = ["reasoning.encrypted_content"]
        body["max_output_tokens"] = (
            request.max_output_tokens or config.max_output_tokens or info.max_output
        )
        if config.reasoning_effort and info.thinking:
            body["reasoning"] = {"effort": config.reasoning_effort, "summary": "auto"}
        return _responses_url(config.base_url), headers, body

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[Delta]:
        state = _StreamState(self.config)
        events = self._events(request)
        async with aclosing(events):
            async for event in events:
                data = parse_data(self.config, event)
                if not isinstance(data, dict):
                    continue
                for delta in state.feed(data):
                    yield delta
                if state.finish is not None:
                    break
        if state.finish is None:
            raise transport_error(self.config, "the stream ended before the response was completed")
        yield UsageReport(state.usage, cost_usd=self.config.info.cost(state.usage))
        yield Finish(state.finish)


class _StreamState:
    """One attempt's view of the stream: which output item is which tool call, and the end."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.calls: dict[str, int] = {}
        """Function-call item id -> our tool-call index."""
        self.call_at: dict[int, int] = {}
        """Output index -> our tool-call index (argument deltas carry both ids)."""
        self.args_sent: set[int] = set()
        self.summary_index: dict[str, int] = {}
        """Reasoning item id -> the summary part whose text streamed last."""
        self.usage = Usage()
        self.finish: str | None = None

    def feed(self, data: dict[str, Any]) -> list[Delta]:
        kind = data.get("type")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            return [TextPart(data["delta"])] if data.get("delta") else []
        if kind == "response.reasoning_summary_text.delta":
            return self._summary(data)
        if kind == "response.reasoning_text.delta":  # open-weight models show raw reasoning
            return [ThinkingPart(data["delta"])] if data.get("delta") else []
        if kind == "response.function_call_arguments.delta":
            index = self._call_index(data)
            if index is None or not data.get("delta"):
                return []
            self.args_sent.add(index)
            return [ToolCallArgs(index, data["delta"])]
        if kind == "response.output_item.added":
            return self._item_added(data)
        if kind == "response.output_item.done":
            return self._item_done(data)
        if kind in ("response.completed", "response.incomplete"):
            self._complete(data.get("response") or {})
            return []
        if kind == "response.failed":
            response = data.get("response") or {}
            raise _failure(self.config, response.get("error") or {}, "the response failed")
        if kind == "error":
            found = data.get("error")
            error: dict[str, Any] = found if isinstance(found, dict) else data
            raise _failure(self.config, error, "the server reported an error")
        return []  # lifecycle and *.done events repeat what the deltas already said

    def _summary(self, data: dict[str, Any]) -> list[Delta]:
        delta = data.get("delta") or ""
        item_id = data.get("item_id", "")
        part = data.get("summary_index", 0)
        previous = self.summary_index.get(item_id)
        self.summary_index[item_id] = part
        parts: list[Delta] = []
        if previous is not None and part != previous:
            parts.append(ThinkingPart("\n\n"))  # summary parts are paragraphs
        if delta:
            parts.append(ThinkingPart(delta))
        return parts

    def _call_index(self, data: dict[str, Any]) -> int | None:
        index = self.calls.get(data.get("item_id", ""))
        return index if index is not None else self.call_at.get(data.get("output_index", -1))

    def _item_added(self, data: dict[str, Any]) -> list[Delta]:
        item = data.get("item") or {}
        if item.get("type") != "function_call":
            return []
        index = len(self.calls)
        self.calls[item.get("id", f"#{index}")] = index
        self.call_at[data.get("output_index", -1)] = index
        deltas: list[Delta] = [ToolCallStart(index, item.get("call_id", ""), item.get("name", ""))]
        if item.get("arguments"):
            self.args_sent.add(index)
            deltas.append(ToolCallArgs(index, item["arguments"]))
        return deltas

    def _item_done(self, data: dict[str, Any]) -> list[Delta]:
        item = data.get("item") or {}
        if item.get("type") == "reasoning":
            return [ThinkingPart("", signature=_pack_reasoning(item))]
        if item.get("type") != "function_call":
            return []
        index = self._call_index({**data, "item_id": item.get("id", "")})
        if index is None or index in self.args_sent or not item.get("arguments"):
            return []
        # Some servers that speak this API send a call's arguments whole, without deltas.
        self.args_sent.add(index)
        return [ToolCallArgs(index, item["arguments"])]

    def _complete(self, response: dict[str, Any]) -> None:
        usage = response.get("usage") or {}
        cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
        self.usage = Usage(
            input_tokens=max((usage.get("input_tokens") or 0) - cached, 0),
            output_tokens=usage.get("output_tokens") or 0,
            cache_read_tokens=cached,
        )
        incomplete = response.get("incomplete_details") or {}
        # An incomplete response (max_output_tokens, content_filter) is a turn that stopped
        # early, like Anthropic's `max_tokens`: its output and its billed tokens stand.
        self.finish = incomplete.get("reason") or response.get("status") or "completed"


def _failure(config: ProviderConfig, error: dict[str, Any], fallback: str) -> ProviderError:
    code = error.get("code") or error.get("type") or ""
    message = str(error.get("message") or fallback)
    wait = _TRY_AGAIN.search(message)
    return ProviderError(
        redact(f"{message} ({code})" if code else message, config),
        provider=config.provider,
        model=config.model,
        retryable=code in _TRANSIENT_CODES,
        retry_after=(float(wait[1]) / (1000 if wait[2].lower() == "ms" else 1)) if wait else None,
        details={"code": code} if code else {},
    )


def _responses_url(base_url: str) -> str:
    base = base_url.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return f"{base}/responses"


def _pack_reasoning(item: dict[str, Any]) -> str:
    """A reasoning item as `Thinking.signature`: what the next turn must send back."""
    packed = {
        "id": item.get("id"),
        "encrypted_content": item.get("encrypted_content"),
        "summary": item.get("summary") or [],
    }
    return json.dumps(packed, separators=(",", ":"), ensure_ascii=False)


def _unpack_reasoning(signature: str | None) -> dict[str, Any] | None:
    """The reasoning input item for a signature this adapter made, else None.

    The item's id stays out: with `store: false` the API looks an id up among stored items
    and fails ("Items are not persisted when `store` is set to false"), while the encrypted
    content alone carries everything (Codex sends reasoning back the same way).
    """
    try:
        packed = json.loads(signature or "")
    except ValueError:
        return None  # another provider's signature, or none: nothing this API can read
    if not isinstance(packed, dict) or not packed.get("encrypted_content"):
        return None
    return {
        "type": "reasoning",
        "summary": packed.get("summary") or [],
        "encrypted_content": packed["encrypted_content"],
    }


def _image(attachment: Attachment) -> dict[str, Any]:
    """An `input_image` (fitted in the API's limits), or a PDF's `input_file` (both data
    URLs)."""
    attachment = fit(attachment, LIMITS["openai"])
    url = f"data:{attachment.mime_type};base64,{attachment.data}"
    if attachment.is_document:
        return {"type": "input_file", "filename": attachment.label, "file_data": url}
    return {"type": "input_image", "image_url": url}


def _input_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []  # from the current run of tool results
    for message in messages:
        if images and not isinstance(message, ToolResultMessage):
            items.append({"type": "message", "role": "user", "content": images})
            images = []
        if isinstance(message, UserMessage):
            content = [_image(a) for a in message.attachments]
            if message.content or not content:
                content.insert(0, {"type": "input_text", "text": message.content})
            items.append({"type": "message", "role": "user", "content": content})
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message))
        else:
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content,
                }
            )
            if message.attachments:
                # A function_call_output carries text here; its images follow as a user
                # message once the run of outputs ends, so no output is split from its call.
                label = f"Images returned by the {message.name} call {message.tool_call_id}:"
                images.append({"type": "input_text", "text": label})
                images += [_image(a) for a in message.attachments]
    if images:
        items.append({"type": "message", "role": "user", "content": images})
    return items


def _assistant_items(message: AssistantMessage) -> list[dict[str, Any]]:
    items = [r for t in message.thinking if (r := _unpack_reasoning(t.signature)) is not None]
    if message.content:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": message.content}],
            }
        )
    for call in message.tool_calls:
        if call.arguments_error is not None and call.raw_arguments is not None:
            arguments = call.raw_arguments  # the API takes a string: send back what came
        else:
            arguments = json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False)
        items.append(
            {"type": "function_call", "call_id": call.id, "name": call.name, "arguments": arguments}
        )
    return items
