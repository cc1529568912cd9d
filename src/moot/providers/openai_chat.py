"""OpenAI Chat Completions, streamed: OpenAI and the servers that speak its dialect.

Wire format: https://platform.openai.com/docs/api-reference/chat/create and
https://platform.openai.com/docs/api-reference/chat-streaming. Ollama, LM Studio, vLLM,
OpenRouter, Groq, DeepSeek, Mistral, xAI, Together and Cerebras speak it too; `presets.py` holds
where each lives and the few body fields they disagree on.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    Message,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    without_documents,
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
    ToolSpec,
    UsageReport,
)
from moot.providers.config import ProviderConfig
from moot.providers.http import HTTPAdapter, parse_data, redact, transport_error
from moot.providers.images import LIMITS, fit
from moot.providers.presets import PRESETS, Preset

_VERSION_SEGMENT = re.compile(r"v\d+")
_ENDPOINT = "/chat/completions"
# In-stream error types and codes that mean "try again later" (OpenAI, OpenRouter, vLLM).
_TRANSIENT = frozenset(
    {"server_error", "rate_limit_exceeded", "rate_limit_error", "overloaded", "overloaded_error"}
    | {"service_unavailable", "internal_error", "timeout", "api_error"}
)
_DEFAULT_DIALECT = Preset("", "", None)


def chat_completions_url(base_url: str) -> str:
    """The endpoint for `base_url`: one `/v<n>` segment, then `/chat/completions`.

    A base already ending in a version segment keeps it (`https://openrouter.ai/api/v1`,
    `https://api.groq.com/openai/v1`); any other gets `/v1` (`http://localhost:11434`). A full
    endpoint URL (ending in `/chat/completions`) is used as given, for servers with odd paths.
    """
    base = base_url.rstrip("/")
    if base.endswith(_ENDPOINT):
        return base
    last = urlsplit(base).path.rsplit("/", 1)[-1]
    if not _VERSION_SEGMENT.fullmatch(last):
        base += "/v1"
    return base + _ENDPOINT


class OpenAIChatProvider(HTTPAdapter):
    """A model behind an OpenAI Chat Completions endpoint."""

    def __init__(self, config: ProviderConfig, *, client: httpx.AsyncClient | None = None) -> None:
        super().__init__(config, client=client)
        self._dialect = PRESETS.get(config.provider, _DEFAULT_DIALECT)

    def build_request(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The URL, headers and JSON body for `request`; pure, so tests can assert it."""
        config = self.config
        info = config.info
        headers = dict(config.headers)
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        body: dict[str, Any] = {
            "model": config.model,
            "messages": to_messages(request.system, request.messages, documents=info.documents),
            "stream": True,
        }
        if self._dialect.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
        limit = request.max_output_tokens or config.max_output_tokens or self._catalog_cap()
        body[self._dialect.max_tokens_field] = limit
        if config.reasoning_effort and info.thinking:
            body["reasoning_effort"] = config.reasoning_effort
        return chat_completions_url(config.base_url), headers, body

    def _catalog_cap(self) -> int:
        """The catalog's output cap, at most the preset's `output_cap` (OpenRouter's) unless
        the settings' `models` give this very model a `max_output`."""
        config, cap = self.config, self._dialect.output_cap
        own = config.catalog.get(config.name)
        if cap is None or (own is not None and own.max_output is not None):
            return config.info.max_output
        return min(config.info.max_output, cap)

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[Delta]:
        reader = _ChunkReader()
        done = False
        events = self._events(request)
        async with aclosing(events):
            async for event in events:
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                chunk = parse_data(self.config, event)
                if not isinstance(chunk, dict):
                    continue
                if (error := _error_of(chunk)) is not None:
                    raise _stream_error(self.config, error)
                for delta in reader.read(chunk):
                    yield delta
        # Some compatible servers end without [DONE]; a finish_reason says the answer is whole.
        if not done and reader.finish_reason is None:
            raise transport_error(
                self.config, "the stream ended before [DONE] and without a finish_reason"
            )
        for delta in reader.flush():
            yield delta
        if reader.usage is not None:
            yield UsageReport(reader.usage, self.config.info.cost(reader.usage))
        yield Finish(reader.finish_reason or "stop")


# --- request -----------------------------------------------------------------------------


def to_messages(
    system: str, messages: Sequence[Message], *, documents: bool = True
) -> list[dict[str, Any]]:
    """The conversation in Chat Completions shape, system message first. Without
    `documents` (many servers behind this API take images but no PDFs: the catalog's
    `documents`), a PDF goes as its text.

    Tool results cannot carry images here, so the images of a run of consecutive tool results
    follow it in one user message (a user message between tool messages would be rejected).
    """
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    with_images: list[ToolResultMessage] = []
    for message in messages:
        if not documents:
            message = without_documents(message)
        if with_images and not isinstance(message, ToolResultMessage):
            wire.append(_tool_images(with_images))
            with_images = []
        if isinstance(message, UserMessage):
            wire.append(_user(message))
        elif isinstance(message, AssistantMessage):
            wire.append(_assistant(message))
        else:
            wire.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
            if message.attachments:
                with_images.append(message)
    if with_images:
        wire.append(_tool_images(with_images))
    return wire


def _user(message: UserMessage) -> dict[str, Any]:
    if not message.attachments:
        return {"role": "user", "content": message.content}
    parts = [{"type": "text", "text": message.content}] if message.content else []
    parts += [_attachment(a) for a in message.attachments]
    return {"role": "user", "content": parts}


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    # Thinking is not sent back: Chat Completions has no field for it, and DeepSeek and
    # Mistral reject `reasoning_content` in input messages.
    wire: dict[str, Any] = {
        "role": "assistant",
        "content": message.content if message.content or not message.tool_calls else None,
    }
    if message.tool_calls:
        wire["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
    return wire


def _tool_call(call: ToolCall) -> dict[str, Any]:
    if call.arguments_error is not None and call.raw_arguments is not None:
        arguments = call.raw_arguments  # the model's own text, so it sees what it wrote
    else:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def _tool_images(results: Sequence[ToolResultMessage]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for result in results:
        parts.append(
            {"type": "text", "text": f"Images from the {result.name} result {result.tool_call_id}:"}
        )
        parts += [_attachment(a) for a in result.attachments]
    return {"role": "user", "content": parts}


def _attachment(attachment: Attachment) -> dict[str, Any]:
    attachment = fit(attachment, LIMITS["openai"])
    url = f"data:{attachment.mime_type};base64,{attachment.data}"
    if attachment.is_image:
        return {"type": "image_url", "image_url": {"url": url}}
    if attachment.is_document:
        return {"type": "file", "file": {"filename": attachment.label, "file_data": url}}
    return {"type": "text", "text": attachment.as_text()}


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": dict(spec.parameters),
        },
    }


# --- response ----------------------------------------------------------------------------


class _Call(msgspec.Struct):
    index: int
    id: str
    name: str = ""
    started: bool = False
    pending: list[str] = []
    """Argument text that arrived before the call's name."""


class _ChunkReader:
    """Turns `chat.completion.chunk` objects into deltas; tool calls are assembled by index."""

    def __init__(self) -> None:
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None

    def read(self, chunk: Mapping[str, Any]) -> Iterator[Delta]:
        usage = chunk.get("usage") or (chunk.get("x_groq") or {}).get("usage")
        if isinstance(usage, dict):
            self.usage = _usage(usage)
        choices = chunk.get("choices") or []
        if not choices:
            return
        choice = choices[0]
        delta = choice.get("delta") or {}
        # DeepSeek, vLLM and llama.cpp say `reasoning_content`; OpenRouter and Ollama `reasoning`.
        thinking = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(thinking, str) and thinking:
            yield ThinkingPart(thinking)
        content = delta.get("content")
        if isinstance(content, str) and content:
            yield TextPart(content)
        for fragment in delta.get("tool_calls") or ():
            yield from self._tool_fragment(fragment)
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])

    def flush(self) -> Iterator[Delta]:
        """Calls whose name never arrived, so their argument text is not lost."""
        for call in self._calls:
            if not call.started:
                yield from self._start(call)

    def _tool_fragment(self, fragment: Mapping[str, Any]) -> Iterator[Delta]:
        call = self._call_for(fragment)
        function = fragment.get("function") or {}
        if not call.started and function.get("name"):
            call.name = str(function["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send an object, not JSON text
            arguments = json.dumps(arguments, ensure_ascii=False)
        if isinstance(arguments, str) and arguments:
            call.pending.append(arguments)
        if call.started:
            if call.pending:
                yield ToolCallArgs(call.index, "".join(call.pending))
                call.pending.clear()
        elif call.name:
            yield from self._start(call)

    def _start(self, call: _Call) -> Iterator[Delta]:
        call.started = True
        yield ToolCallStart(call.index, call.id, call.name)
        if call.pending:
            yield ToolCallArgs(call.index, "".join(call.pending))
            call.pending.clear()

    def _call_for(self, fragment: Mapping[str, Any]) -> _Call:
        index = fragment.get("index")
        call_id = str(fragment.get("id") or "")
        if isinstance(index, int):
            current = self._by_index.get(index)
        else:  # no index: a fragment without an id continues the latest call
            current = self._calls[-1] if self._calls and not call_id else None
        # A new id at a known index is a new call (servers that number every call 0).
        if current is not None and not (call_id and current.id and call_id != current.id):
            if call_id and not current.id:
                current.id = call_id
            return current
        call = _Call(index=len(self._calls), id=call_id)
        self._calls.append(call)
        if isinstance(index, int):
            self._by_index[index] = call
        return call


def _usage(usage: Mapping[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details") or {}
    # DeepSeek also reports `prompt_cache_hit_tokens`; OpenAI only the details.
    cached = details.get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
    prompt = usage.get("prompt_tokens") or 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=usage.get("completion_tokens") or 0,
        cache_read_tokens=cached,
    )


def _error_of(chunk: Mapping[str, Any]) -> Any:
    if chunk.get("error") is not None:
        return chunk["error"]
    if chunk.get("object") == "error":  # vLLM's bare error object
        return chunk
    return None


def _stream_error(config: ProviderConfig, error: Any) -> ProviderError:
    """An `{"error": ...}` chunk inside a 200 stream, as a ProviderError."""
    if not isinstance(error, dict):
        error = {"message": str(error)}
    code, kind = error.get("code"), error.get("type")
    message = str(error.get("message") or kind or code or "the server reported an error")
    status = code if isinstance(code, int) else None
    if isinstance(code, str) and code.isdigit():
        status = int(code)
    retryable = (status is not None and status in config.retry.statuses) or bool(
        {str(code), str(kind)} & _TRANSIENT
    )
    return ProviderError(
        redact(message, config),
        provider=config.provider,
        model=config.model,
        retryable=retryable,
        details={"code": code, "type": kind},
    )
