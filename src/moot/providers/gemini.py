"""Google Gemini through `streamGenerateContent` with `alt=sse`.

API reference: https://ai.google.dev/api/generate-content. Where this API differs from the
others:

- There is no end-of-stream event. Every chunk is a whole `GenerateContentResponse`; the last
  one carries `finishReason`. A stream that ends cleanly after a finish reason is complete; one
  that ends without any is truncated.
- Function calls arrive whole (`args` is an object, never streamed text) and, on older API
  versions, without an id, so this adapter makes one. Results go back as `functionResponse`
  parts matched by name and order (and by `id`, which newer versions accept).
- Thought signatures (https://ai.google.dev/gemini-api/docs/thought-signatures): any part may
  carry a `thoughtSignature`, and it must go back on the same kind of part it came on. Gemini
  2.5 puts it on the first `functionCall` part of a step, or on a text or thought part. Every
  signature is packed as JSON into `Thinking.signature`, under the `gemini` marker key that
  names the part it came on:

      {"gemini": "thought", "thoughtSignature": "..."}               on a thought part
      {"gemini": "text", "thoughtSignature": "..."}                  on an answer text part
      {"gemini": "functionCall", "id": "<call id>", "thoughtSignature": "..."}

  `ToolCall` has no room for provider data, so a function call's signature travels as its own
  entry in the assistant turn's thinking list, keyed by the call id. The marker also lets every
  adapter tell a Gemini signature from its own: a signature this adapter did not pack is never
  sent to Gemini (its thinking text still goes back, as an unsigned thought part).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from itertools import groupby
from typing import Any
from urllib.parse import urlsplit, urlunsplit

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
    ToolSpec,
    UsageReport,
)
from moot.providers.config import ProviderConfig
from moot.providers.http import HTTPAdapter, parse_data, redact, transport_error
from moot.providers.images import LIMITS, fit

THINKING_BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}
"""`thinkingBudget` for each `reasoning_effort`; 24576 is Gemini 2.5 Flash's maximum."""

SIGNATURE_MARKER = "gemini"
"""The key that marks a `Thinking.signature` this adapter packed (see the module docstring)."""

# The HTTP status each google.rpc status stands for, so an error inside a 200 stream is judged
# retryable by the same RetryPolicy.statuses as an error status.
# https://cloud.google.com/apis/design/errors#handling_errors
_RPC_STATUS = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
_PART_KINDS = ("thought", "text", "functionCall")


API_VERSION = "v1beta"
"""The API version this adapter speaks: thinking and function-call ids are v1beta's."""

_VERSION_SUFFIX = re.compile(r"/v1(?:beta|alpha)?$")


def stream_url(base_url: str, model: str) -> str:
    """The `streamGenerateContent` URL of `model` under `base_url`, whatever version it ended in.

    `https://generativelanguage.googleapis.com`, `.../v1` and `.../v1beta` all give
    `.../v1beta/models/...`: a base URL works with or without its version, as for every other
    provider. Only the path changes; a query the base URL carries (a proxy's `?tenant=a`) stays,
    with `alt=sse` added to it.
    """
    parts = urlsplit(base_url)
    root = _VERSION_SUFFIX.sub("", parts.path.rstrip("/"))
    path = f"{root}/{API_VERSION}/models/{model}:streamGenerateContent"
    query = f"{parts.query}&alt=sse" if parts.query else "alt=sse"
    return urlunsplit(parts._replace(path=path, query=query, fragment=""))


class GeminiProvider(HTTPAdapter):
    """Gemini models through the Generative Language API (`x-goog-api-key` auth)."""

    def build_request(self, request: ModelRequest) -> tuple[str, dict[str, str], dict]:
        """The URL, headers and JSON body of one streamed generateContent call (pure)."""
        config = self.config
        model = config.model.removeprefix("models/")
        url = stream_url(config.base_url, model)
        headers = {"x-goog-api-key": config.api_key} if config.api_key else {}
        headers.update(config.headers)

        info = config.info
        body: dict[str, Any] = {}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        body["contents"] = convert_messages(request.messages)
        if request.tools:
            body["tools"] = [{"functionDeclarations": [_declaration(t) for t in request.tools]}]
        generation: dict[str, Any] = {
            "maxOutputTokens": request.max_output_tokens
            or config.max_output_tokens
            or info.max_output
        }
        if config.reasoning_effort and info.thinking:
            thinking: dict[str, Any] = {"includeThoughts": True}
            if (budget := THINKING_BUDGETS.get(config.reasoning_effort)) is not None:
                thinking["thinkingBudget"] = budget  # else the model's own dynamic budget
            generation["thinkingConfig"] = thinking
        body["generationConfig"] = generation
        return url, headers, body

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[Delta]:
        reader = _StreamReader(self.config)
        events = self._events(request)
        async with aclosing(events):
            async for event in events:
                for delta in reader.feed(parse_data(self.config, event)):
                    yield delta
        if reader.finish_reason is None:
            raise transport_error(self.config, "the stream ended before a finishReason")
        usage = reader.usage()
        yield UsageReport(usage, cost_usd=self.config.info.cost(usage))
        yield Finish(reader.finish_reason)


# ---- the stream ---------------------------------------------------------------------------


class _StreamReader:
    """Maps the chunks of one streamed answer to deltas, keeping the last usage and finish."""

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config
        self.finish_reason: str | None = None
        self._usage: dict[str, Any] = {}
        self._calls = 0
        self._response_id = ""

    def usage(self) -> Usage:
        u = {k: v for k, v in self._usage.items() if isinstance(v, int)}
        cached = u.get("cachedContentTokenCount", 0)
        prompt = u.get("promptTokenCount", 0) + u.get("toolUsePromptTokenCount", 0)
        return Usage(
            input_tokens=max(prompt - cached, 0),
            output_tokens=u.get("candidatesTokenCount", 0) + u.get("thoughtsTokenCount", 0),
            cache_read_tokens=cached,
        )

    def feed(self, chunk: Any) -> list[Delta]:
        if isinstance(chunk, list):  # some proxies send the JSON-array form of the stream
            return [delta for item in chunk for delta in self.feed(item)]
        if not isinstance(chunk, dict):
            return []
        if "error" in chunk:
            raise self._error(chunk["error"])
        if isinstance(chunk.get("usageMetadata"), dict):
            self._usage = chunk["usageMetadata"]  # cumulative: the last one counts
        self._response_id = self._response_id or str(chunk.get("responseId") or "")
        candidates = chunk.get("candidates") or []
        if not candidates:
            blocked = (chunk.get("promptFeedback") or {}).get("blockReason")
            if blocked:
                raise ProviderError(
                    f"Gemini blocked the prompt ({blocked})",
                    provider=self.config.provider,
                    model=self.config.model,
                    details={"blockReason": blocked},
                )
            return []
        candidate = candidates[0]
        parts = (candidate.get("content") or {}).get("parts") or []
        deltas = [delta for part in parts for delta in self._part(part)]
        if candidate.get("finishReason"):
            self.finish_reason = candidate["finishReason"]
        return deltas

    def _part(self, part: dict[str, Any]) -> list[Delta]:
        signature = part.get("thoughtSignature")
        if isinstance(call := part.get("functionCall"), dict):
            index = self._calls
            self._calls += 1
            call_id = call.get("id") or self._call_id(index)
            args = json.dumps(call.get("args") or {}, ensure_ascii=False)
            deltas: list[Delta] = [
                ToolCallStart(index, call_id, call.get("name", "")),
                ToolCallArgs(index, args),
            ]
            if signature:
                deltas.append(ThinkingPart("", _pack("functionCall", signature, call_id)))
            return deltas
        text = part.get("text") or ""
        if part.get("thought"):
            if text or signature:
                return [ThinkingPart(text, _pack("thought", signature) if signature else None)]
            return []
        deltas = [TextPart(text)] if text else []
        if signature:
            deltas.append(ThinkingPart("", _pack("text", signature)))
        return deltas  # inlineData, executableCode, ...: nothing moot shows

    def _call_id(self, index: int) -> str:
        """An id for a call Gemini sent without one, unique across the session's turns.

        The response id makes it unique (a repeated `call_0` would be renamed by the turn
        assembler, and its packed signature would no longer find it).
        """
        if not self._response_id:
            self._response_id = secrets.token_hex(6)
        return f"call_{self._response_id}_{index}"

    def _error(self, error: Any) -> ProviderError:
        if not isinstance(error, dict):
            error = {"message": str(error)}
        rpc = str(error.get("status") or "")
        code = error.get("code") if isinstance(error.get("code"), int) else None
        status = _RPC_STATUS.get(rpc, code)
        return ProviderError(
            redact(str(error.get("message") or rpc or "error"), self.config),
            provider=self.config.provider,
            model=self.config.model,
            status=status,
            retryable=status is not None and status in self.config.retry.statuses,
            retry_after=_retry_delay(error.get("details")),
            details={"status": rpc} if rpc else {},
        )


def _retry_delay(details: Any) -> float | None:
    """Seconds from a google.rpc.RetryInfo detail (`"retryDelay": "35s"`), if there is one."""
    for detail in details if isinstance(details, list) else ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(detail.get("retryDelay", "")))
            if match:
                return float(match[1])
    return None


def _pack(part: str, signature: str, call_id: str | None = None) -> str:
    packed = {SIGNATURE_MARKER: part, "thoughtSignature": signature}
    if call_id is not None:
        packed["id"] = call_id
    return json.dumps(packed, separators=(",", ":"))


def _unpack(signature: str | None) -> dict[str, str] | None:
    """A signature this adapter packed, or None (no signature, or another adapter's)."""
    if not signature or not signature.startswith("{"):
        return None
    try:
        packed = json.loads(signature)
    except ValueError:
        return None
    if (
        isinstance(packed, dict)
        and packed.get(SIGNATURE_MARKER) in _PART_KINDS
        and isinstance(packed.get("thoughtSignature"), str)
    ):
        return packed
    return None


# ---- messages -----------------------------------------------------------------------------


def convert_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as Gemini `contents`: roles `user` and `model`, neighbours merged.

    A run of tool results becomes one user content: every `functionResponse` part first, in
    call order (Gemini matches them to the calls by name and position), then their images.
    """
    contents: list[dict[str, Any]] = []
    for is_result, run in groupby(messages, key=lambda m: isinstance(m, ToolResultMessage)):
        if is_result:
            results = [m for m in run if isinstance(m, ToolResultMessage)]
            parts = [_function_response(m) for m in results]
            parts += [_inline(a) for m in results for a in m.attachments]
            _append(contents, "user", parts)
            continue
        for message in run:
            if isinstance(message, UserMessage):
                # Google's prompting guide puts images before the text that asks about them.
                parts = [*map(_inline, message.attachments), *_text(message.content)]
                _append(contents, "user", parts)
            elif isinstance(message, AssistantMessage):
                _append(contents, "model", _model_parts(message))
    return contents


def _append(contents: list[dict[str, Any]], role: str, parts: list[dict[str, Any]]) -> None:
    if not parts:
        return  # a content without parts is rejected; its neighbours merge instead
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)
    else:
        contents.append({"role": role, "parts": parts})


def _model_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    """Thought parts, the answer text, then the function calls, each signature on its part."""
    parts: list[dict[str, Any]] = []
    text_signature: str | None = None
    call_signatures: dict[str, str] = {}
    for thinking in message.thinking:
        packed = _unpack(thinking.signature)
        kind = packed[SIGNATURE_MARKER] if packed else None
        if packed and kind == "functionCall":
            call_signatures[packed.get("id", "")] = packed["thoughtSignature"]
        elif packed and kind == "text":
            text_signature = packed["thoughtSignature"]
        thought: dict[str, Any] = {"text": thinking.text, "thought": True}
        if packed and kind == "thought":
            thought["thoughtSignature"] = packed["thoughtSignature"]
        if thinking.text or "thoughtSignature" in thought:
            parts.append(thought)
    if message.content:
        parts.append({"text": message.content})
        if text_signature:
            parts[-1]["thoughtSignature"] = text_signature
    # A text signature with no text to carry it is dropped: Gemini validates signatures only
    # on function calls, and an empty text part is rejected.
    for call in message.tool_calls:
        # Arguments that did not parse go back as {}: `args` must be an object.
        args = call.arguments if call.arguments_error is None else {}
        part: dict[str, Any] = {"functionCall": {"id": call.id, "name": call.name, "args": args}}
        if call.id in call_signatures:
            part["thoughtSignature"] = call_signatures[call.id]
        parts.append(part)
    return parts


def _function_response(message: ToolResultMessage) -> dict[str, Any]:
    response = {"error" if message.is_error else "content": message.content}
    return {
        "functionResponse": {
            "id": message.tool_call_id,
            "name": message.name,
            "response": response,
        }
    }


def _text(text: str) -> list[dict[str, Any]]:
    return [{"text": text}] if text else []  # an empty text part is rejected


def _inline(attachment: Attachment) -> dict[str, Any]:
    attachment = fit(attachment, LIMITS["gemini"])
    return {"inlineData": {"mimeType": attachment.mime_type, "data": attachment.data}}


# ---- tools --------------------------------------------------------------------------------


def _declaration(tool: ToolSpec) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
    parameters = gemini_schema(tool.parameters)
    if parameters.get("properties"):
        # An OBJECT schema with empty `properties` is rejected; a tool without
        # parameters simply leaves them out.
        declaration["parameters"] = parameters
    return declaration


_SCHEMA_KEYS = frozenset(
    {"type", "description", "enum", "items", "properties", "required", "nullable", "format"}
)
_STRING_FORMATS = frozenset({"enum", "date-time"})


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON schema cut down to the OpenAPI subset Gemini's `Schema` accepts.

    Keeps type, description, enum (strings only), items, properties, required, nullable and
    format (string `enum`/`date-time` only); drops the rest (additionalProperties, $schema,
    default, title, ...). `anyOf [X, {"type": "null"}]` and `"type": [X, "null"]` become X with
    `nullable: true`; a `const` string becomes a one-value enum; any other `anyOf` is kept, with
    each branch cut down the same way.
    """
    schema = dict(schema)
    nullable = False
    if isinstance(variants := schema.pop("anyOf", None), list):
        branches = [v for v in variants if isinstance(v, Mapping) and v.get("type") != "null"]
        nullable = len(branches) < len(variants)
        if len(branches) == 1:
            schema = {**branches[0], **schema}  # the outer description wins over the branch's
        elif branches:
            schema["anyOf"] = branches
    if isinstance(types := schema.get("type"), list):
        named = [t for t in types if t != "null"]
        nullable = nullable or len(named) < len(types)
        schema["type"] = named[0] if len(named) == 1 else None
        if len(named) > 1:
            schema["anyOf"] = [{"type": t} for t in named]
    if isinstance(schema.get("const"), str) and "enum" not in schema:
        schema["enum"] = [schema["const"]]

    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "anyOf":
            out["anyOf"] = [gemini_schema(v) for v in value]
        elif key not in _SCHEMA_KEYS or value is None:
            continue
        elif key == "properties" and isinstance(value, Mapping):
            # Keys here are property names, not keywords: "title" or "default" survive.
            out[key] = {name: gemini_schema(sub) for name, sub in value.items()}
        elif key == "items" and isinstance(value, Mapping):
            out[key] = gemini_schema(value)
        elif key == "enum":
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                out[key] = list(value)
        elif key == "format":
            if schema.get("type") == "string" and value in _STRING_FORMATS:
                out[key] = value
        elif key not in ("properties", "items"):
            out[key] = value
    if nullable:
        out["nullable"] = True
    if "required" in out:
        names = out.get("properties", {})
        out["required"] = [n for n in out["required"] if n in names]
        if not out["required"]:
            del out["required"]
    if out.get("type") == "object" and not out.get("properties"):
        out.pop("properties", None)
    return out
