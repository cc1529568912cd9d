"""The Gemini adapter against a real local HTTP server replaying recorded-shape SSE streams."""

from __future__ import annotations

import json
from typing import Any

import pytest
from msgspec.structs import replace

from model_server import ModelServer, Reply, sse_fixture
from moot.core.assemble import TurnBuilder
from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    Message,
    Thinking,
    ToolCall,
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
from moot.providers.catalog import lookup
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.gemini import GeminiProvider, gemini_schema

KEY = "AIzaSyD-test-0123456789abcdefghijklmnop"
CALL_SIGNATURE = "CiQB0e2Kb6pV8tPbJqKJ2w0p9J1lZcQyVfR0dX0fP1nWQ2o8AbIKZgHR7Ypv"
"""The thoughtSignature on the function call of tool_call.sse."""
PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


def sse(name: str) -> Reply:
    return Reply(body=sse_fixture("gemini", name))


def gemini_error(code: int, status: str, message: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "status": status}}).encode()


def config(base_url: str, **changes: Any) -> ProviderConfig:
    base = ProviderConfig(
        provider="gemini",
        model="gemini-2.5-flash",
        base_url=base_url,
        api_key=KEY,
        retry=RetryPolicy(base_delay=0.01),
    )
    return replace(base, **changes)


def ask(*messages: Message, tools: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    return ModelRequest(
        model="gemini-2.5-flash",
        system="You are a coding agent.",
        messages=messages or (UserMessage(content="Hi"),),
        tools=tools,
    )


async def play(server: ModelServer, request: ModelRequest | None = None, **changes: Any):
    """Deltas that arrived and the error that ended the stream (None when it finished)."""
    provider = GeminiProvider(config(server.url, **changes))
    deltas: list[Delta] = []
    try:
        async for delta in provider.stream(request or ask()):
            deltas.append(delta)
    except ProviderError as error:
        return deltas, error
    finally:
        await provider.aclose()
    return deltas, None


def usage_report(usage: Usage) -> UsageReport:
    return UsageReport(usage, cost_usd=lookup("gemini/gemini-2.5-flash").cost(usage))


# ---- streams -> deltas --------------------------------------------------------------------


async def test_plain_text_streams_and_the_request_has_the_key_in_a_header(server):
    server.reply(sse("text"))
    deltas, error = await play(server)
    assert error is None
    usage = Usage(input_tokens=12, output_tokens=9)
    assert deltas == [
        TextPart("Hello"),
        TextPart("! How can I help"),
        TextPart(" you today?"),
        usage_report(usage),
        Finish("STOP"),
    ]
    sent = server.requests[0]
    assert sent.method == "POST"
    assert sent.path == PATH
    assert KEY not in sent.path
    assert sent.headers["x-goog-api-key"] == KEY
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json == {
        "systemInstruction": {"parts": [{"text": "You are a coding agent."}]},
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"maxOutputTokens": 65536},
    }


async def test_a_function_call_arrives_whole_with_a_made_up_id_and_its_signature(server):
    server.reply(sse("tool_call"))
    deltas, error = await play(server)
    assert error is None
    call_id = "call_1kzHaP3UI8-e1MkPhKe5gA4_0"
    signature = json.dumps(
        {
            "gemini": "functionCall",
            "thoughtSignature": CALL_SIGNATURE,
            "id": call_id,
        },
        separators=(",", ":"),
    )
    assert deltas == [
        TextPart("I'll read the file first."),
        ToolCallStart(0, call_id, "read_file"),
        ToolCallArgs(0, '{"path": "src/app.py"}'),
        ThinkingPart("", signature=signature),
        usage_report(Usage(input_tokens=431, output_tokens=27 + 87)),
        Finish("STOP"),
    ]


async def test_parallel_calls_across_chunks_count_on(server):
    server.reply(sse("parallel_tool_calls"))
    deltas, _ = await play(server)
    starts = [d for d in deltas if isinstance(d, ToolCallStart)]
    args = [d for d in deltas if isinstance(d, ToolCallArgs)]
    prefix = "call_e0zHaJuHHfqZvdIPr-uu-Qo_"
    assert starts == [
        ToolCallStart(0, prefix + "0", "read_file"),
        ToolCallStart(1, prefix + "1", "read_file"),
        ToolCallStart(2, prefix + "2", "grep"),
    ]
    assert args == [
        ToolCallArgs(0, '{"path": "README.md"}'),
        ToolCallArgs(1, '{"path": "pyproject.toml"}'),
        ToolCallArgs(2, '{"pattern": "TODO", "glob": "**/*.py"}'),
    ]
    # Only the first call of the step carries a signature, as Gemini sends it.
    signed = [d for d in deltas if isinstance(d, ThinkingPart)]
    assert [json.loads(d.signature or "")["id"] for d in signed] == [prefix + "0"]
    assert deltas[-2:] == [
        usage_report(Usage(input_tokens=512, output_tokens=61 + 140)),
        Finish("STOP"),
    ]


async def test_a_call_id_from_the_api_is_kept(server):
    chunk = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"id": "8f2kq1", "name": "ls", "args": {}}}],
                },
                "finishReason": "STOP",
            }
        ]
    }
    server.reply(Reply(body=b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"))
    deltas, _ = await play(server)
    assert deltas[:2] == [ToolCallStart(0, "8f2kq1", "ls"), ToolCallArgs(0, "{}")]


async def test_thoughts_stream_and_the_text_signature_closes_them_and_cache_reads_count(server):
    server.reply(sse("thinking"))
    deltas, _ = await play(server, reasoning_effort="medium")
    signature = '{"gemini":"text","thoughtSignature":"Cs8DAdHtim9zJ4kq0bE1Vn2c8Zp7yWQ3"}'
    usage = Usage(input_tokens=8210 - 8064, output_tokens=14 + 228, cache_read_tokens=8064)
    assert deltas == [
        ThinkingPart("**Locating the failure**\n\nThe traceback points at `parse()`"),
        ThinkingPart(", which returns early when the header is empty."),
        TextPart("The test fails because"),
        ThinkingPart("", signature=signature),
        TextPart(" `parse()` returns None for an empty header."),
        UsageReport(usage, cost_usd=pytest.approx((146 * 0.3 + 242 * 2.5 + 8064 * 0.075) / 1e6)),
        Finish("STOP"),
    ]
    assert server.requests[0].json["generationConfig"] == {
        "maxOutputTokens": 65536,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }


async def test_a_malformed_function_call_finishes_with_gemini_own_reason(server):
    # Gemini never streams argument text: a call it cannot form ends the turn with this
    # finish reason instead, and the loop sees an empty turn with that reason.
    server.reply(sse("malformed_function_call"))
    deltas, error = await play(server)
    assert error is None
    assert deltas == [
        usage_report(Usage(input_tokens=431, output_tokens=112)),
        Finish("MALFORMED_FUNCTION_CALL"),
    ]


async def test_a_blocked_prompt_is_an_error_that_is_not_retried(server):
    server.reply(sse("blocked"), sse("text"))
    deltas, error = await play(server)
    assert deltas == []
    assert error is not None and not error.retryable
    assert "PROHIBITED_CONTENT" in str(error)
    assert len(server.requests) == 1


# ---- a whole tool round trip ------------------------------------------------------------


async def test_signatures_go_back_on_the_parts_they_came_on(server):
    server.reply(sse("thinking"), sse("tool_call"), sse("text"))
    first, _ = await play(server)
    second, _ = await play(server)

    def turn(deltas: list[Delta]) -> AssistantMessage:
        builder = TurnBuilder()
        for delta in deltas:
            builder.add(delta)
        calls = builder.tool_calls(taken=())
        return AssistantMessage(content=builder.text, thinking=builder.thinking, tool_calls=calls)

    answered, called = turn(first), turn(second)
    call_id = called.tool_calls[0].id
    result = ToolResultMessage(tool_call_id=call_id, name="read_file", content="print('hi')")
    request = ask(
        UserMessage(content="Why?"), answered, UserMessage(content="Fix it"), called, result
    )
    await play(server, request)
    assert server.requests[2].json["contents"] == [
        {"role": "user", "parts": [{"text": "Why?"}]},
        {
            "role": "model",
            "parts": [
                {
                    "text": "**Locating the failure**\n\nThe traceback points at `parse()`"
                    ", which returns early when the header is empty.",
                    "thought": True,
                },
                {
                    "text": "The test fails because `parse()` returns None for an empty header.",
                    "thoughtSignature": "Cs8DAdHtim9zJ4kq0bE1Vn2c8Zp7yWQ3",
                },
            ],
        },
        {"role": "user", "parts": [{"text": "Fix it"}]},
        {
            "role": "model",
            "parts": [
                {"text": "I'll read the file first."},
                {
                    "functionCall": {
                        "id": call_id,
                        "name": "read_file",
                        "args": {"path": "src/app.py"},
                    },
                    "thoughtSignature": CALL_SIGNATURE,
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": call_id,
                        "name": "read_file",
                        "response": {"content": "print('hi')"},
                    }
                }
            ],
        },
    ]


# ---- request shape ------------------------------------------------------------------------


PNG = Attachment(mime_type="image/png", data="iVBORw0KGgo=")


def test_conversation_parts_images_errors_and_foreign_thinking():
    provider = GeminiProvider(config("https://generativelanguage.googleapis.com"))
    anthropic_thinking = Thinking(text="Anthropic reasoning", signature="EqQBCkYIBxgCKkBx")
    packed_thought = Thinking(text="Mine", signature='{"gemini":"thought","thoughtSignature":"s1"}')
    messages = (
        UserMessage(content="What is in this screenshot?", attachments=(PNG,)),
        AssistantMessage(
            content="",
            thinking=(anthropic_thinking, packed_thought),
            tool_calls=(
                ToolCall(id="c1", name="shot", arguments={"zoom": 2}),
                ToolCall(id="c2", name="run", arguments_error="not JSON", raw_arguments='{"cmd": '),
            ),
        ),
        ToolResultMessage(tool_call_id="c1", name="shot", content="taken", attachments=(PNG,)),
        ToolResultMessage(tool_call_id="c2", name="run", content="bad arguments", is_error=True),
        UserMessage(content="And now?"),
    )
    _, _, body = provider.build_request(ask(*messages))
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    assert body["contents"] == [
        {"role": "user", "parts": [image, {"text": "What is in this screenshot?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Anthropic reasoning", "thought": True},
                {"text": "Mine", "thought": True, "thoughtSignature": "s1"},
                {"functionCall": {"id": "c1", "name": "shot", "args": {"zoom": 2}}},
                {"functionCall": {"id": "c2", "name": "run", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "shot",
                        "response": {"content": "taken"},
                    }
                },
                {
                    "functionResponse": {
                        "id": "c2",
                        "name": "run",
                        "response": {"error": "bad arguments"},
                    }
                },
                image,
                {"text": "And now?"},
            ],
        },
    ]


@pytest.mark.parametrize(
    "base_url",
    [
        "https://generativelanguage.googleapis.com",
        "https://generativelanguage.googleapis.com/",
        "https://generativelanguage.googleapis.com/v1beta",
        "https://generativelanguage.googleapis.com/v1beta/",
        "https://generativelanguage.googleapis.com/v1",
        "https://generativelanguage.googleapis.com/v1/",
    ],
)
def test_the_base_url_may_name_the_api_version_or_not(base_url):
    url, headers, _ = GeminiProvider(config(base_url)).build_request(ask())
    assert url == "https://generativelanguage.googleapis.com" + PATH
    assert headers == {"x-goog-api-key": KEY}


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        (
            "https://proxy.example/gemini/v1?tenant=a",
            "https://proxy.example/gemini" + PATH.replace("?", "?tenant=a&"),
        ),
        (
            "https://proxy.example/gemini/v1beta/?tenant=a&region=eu",
            "https://proxy.example/gemini" + PATH.replace("?", "?tenant=a&region=eu&"),
        ),
        (
            "https://proxy.example:8443/gemini?x=1#frag",
            "https://proxy.example:8443/gemini" + PATH.replace("?", "?x=1&"),
        ),
    ],
)
def test_a_query_on_the_base_url_stays_on_the_query_and_alt_sse_joins_it(base_url, url):
    """Only the path gets the version and the model; the proxy's query is kept whole."""
    assert GeminiProvider(config(base_url)).build_request(ask())[0] == url


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/", "/v1beta"])
async def test_gemini_base_url_from_the_environment_with_or_without_a_version(
    server, suffix, tmp_path
):
    from moot.providers.registry import resolve_model

    environ = {"GEMINI_API_KEY": KEY, "GEMINI_BASE_URL": server.url + suffix}
    environ["MOOT_HOME"] = str(tmp_path)
    provider = resolve_model("gemini/gemini-2.5-flash", environ)
    server.reply(sse("text"))
    try:
        [delta async for delta in provider.stream(ask())]
    finally:
        await provider.aclose()
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", PATH)


def test_thinking_is_asked_for_only_when_the_model_thinks():
    flash = GeminiProvider(config("http://x", reasoning_effort="high"))
    assert flash.build_request(ask())[2]["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingBudget": 24576,
    }
    other = GeminiProvider(config("http://x", model="gemma-3-27b-it", reasoning_effort="high"))
    assert other.build_request(ask())[2]["generationConfig"] == {"maxOutputTokens": 4096}
    capped = GeminiProvider(config("http://x", max_output_tokens=2000))
    limited = replace(ask(), max_output_tokens=500)
    assert capped.build_request(ask())[2]["generationConfig"] == {"maxOutputTokens": 2000}
    assert capped.build_request(limited)[2]["generationConfig"] == {"maxOutputTokens": 500}


def test_tools_are_declared_in_the_schema_subset_gemini_accepts():
    parameters = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Args",
        "additionalProperties": False,
        "properties": {
            "path": {"type": "string", "description": "A file.", "title": "Path"},
            "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "mode": {"enum": ["r", "w"], "type": "string", "format": "enum"},
            "when": {"type": "string", "format": "date-time"},
            "url": {"type": "string", "format": "uri"},
            "kind": {"const": "file"},
            "limit": {"type": ["integer", "null"], "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string", "title": "Tag"}},
        },
        "required": ["path"],
    }
    tools = (
        ToolSpec("read", "Read a file.", parameters),
        ToolSpec("now", "The time.", {"type": "object", "properties": {}}),
    )
    _, _, body = GeminiProvider(config("http://x")).build_request(ask(tools=tools))
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "read",
                    "description": "Read a file.",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "A file."},
                            "title": {"type": "string", "nullable": True},
                            "mode": {"enum": ["r", "w"], "type": "string", "format": "enum"},
                            "when": {"type": "string", "format": "date-time"},
                            "url": {"type": "string"},
                            "kind": {"enum": ["file"]},
                            "limit": {"type": "integer", "nullable": True},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["path"],
                    },
                },
                {"name": "now", "description": "The time."},
            ]
        }
    ]


def test_schema_unions_keep_their_branches_and_the_outer_description():
    assert gemini_schema(
        {
            "description": "A size.",
            "anyOf": [{"type": "integer", "description": "inner"}, {"type": "null"}],
        }
    ) == {"type": "integer", "description": "A size.", "nullable": True}
    assert gemini_schema({"anyOf": [{"type": "integer"}, {"type": "string", "title": "S"}]}) == {
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    }


# ---- faults -------------------------------------------------------------------------------


async def test_429_with_retry_after_is_retried(server):
    body = gemini_error(
        429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."
    )
    server.reply(
        Reply(429, body, headers={"retry-after": "0.01"}, content_type="application/json"),
        sse("text"),
    )
    deltas, error = await play(server)
    assert error is None and deltas[-1] == Finish("STOP")
    assert len(server.requests) == 2
    assert server.requests[1].json == server.requests[0].json


async def test_500_then_success(server):
    body = gemini_error(500, "INTERNAL", "An internal error has occurred.")
    server.reply(Reply(500, body, content_type="application/json"), sse("text"))
    deltas, error = await play(server)
    assert error is None and TextPart("Hello") in deltas
    assert len(server.requests) == 2


async def test_an_overloaded_error_event_before_output_is_retried(server):
    server.reply(sse("overloaded"), sse("text"))
    deltas, error = await play(server)
    assert error is None and deltas[0] == TextPart("Hello")
    assert len(server.requests) == 2


async def test_overloaded_every_time_gives_up_with_the_server_message(server):
    server.reply(*[sse("overloaded")] * 4)
    deltas, error = await play(server)
    assert deltas == []
    assert error is not None and error.retryable and error.status == 503
    assert "The model is overloaded" in error.message and "after 4 tries" in error.message


async def test_a_quota_error_event_is_a_retryable_429_with_the_rpc_retry_delay(server):
    error_event = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "35s"},
            ],
        }
    }
    server.reply(Reply(body=b"data: " + json.dumps(error_event).encode() + b"\r\n\r\n"))
    deltas, error = await play(server, retry=RetryPolicy(attempts=1))
    assert deltas == []
    assert error is not None and error.retryable
    assert (error.status, error.retry_after) == (429, 35.0)
    assert "exceeded your current quota" in error.message


async def test_an_error_event_after_output_ends_the_turn_without_a_retry(server):
    server.reply(sse("error_mid_stream"), sse("text"))
    deltas, error = await play(server)
    assert deltas == [TextPart("Let me check")]
    assert error is not None and error.status == 500
    assert "An internal error has occurred" in error.message
    assert len(server.requests) == 1


async def test_a_reset_before_the_first_byte_is_retried(server):
    server.reply(Reply(fault="reset_before"), sse("text"))
    deltas, error = await play(server)
    assert error is None and deltas[0] == TextPart("Hello")
    assert len(server.requests) == 2


async def test_a_reset_after_output_delivers_the_partial_text_and_fails(server):
    body = sse_fixture("gemini", "text")
    first_event = body.index(b"\r\n\r\n") + 4
    server.reply(Reply(body=body, fault="reset_after", fault_at=first_event), sse("text"))
    deltas, error = await play(server)
    assert deltas == [TextPart("Hello")]
    assert error is not None and "connection failed" in error.message
    assert len(server.requests) == 1


async def test_a_stream_cut_mid_event_is_truncated(server):
    server.reply(*[Reply(body=sse_fixture("gemini", "text"), fault="truncate", fault_at=100)] * 4)
    deltas, error = await play(server)
    assert deltas == []  # nothing was output, so every try was retried
    assert error is not None and error.retryable and "incomplete chunked read" in error.message
    assert len(server.requests) == 4


async def test_a_clean_end_without_a_finish_reason_is_truncated(server):
    server.reply(sse("no_finish"))
    deltas, error = await play(server)
    assert deltas == [TextPart("Partial"), TextPart(" answer")]
    assert error is not None and error.retryable
    assert "ended before a finishReason" in error.message


async def test_malformed_json_before_output_is_retried(server):
    server.reply(sse("malformed"), sse("text"))
    deltas, error = await play(server)
    assert error is None and deltas[0] == TextPart("Hello")
    assert len(server.requests) == 2


async def test_a_server_slower_than_the_read_timeout_times_out(server):
    server.reply(*[Reply(body=sse_fixture("gemini", "text"), fault="slow", delay=1)] * 2)
    deltas, error = await play(server, read_timeout=0.2, retry=RetryPolicy(2, base_delay=0.01))
    assert deltas == []
    assert error is not None and "read timeout" in error.message
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 401])
async def test_client_errors_are_not_retried_and_carry_the_server_message(server, status):
    # Streaming errors may come wrapped in a JSON array.
    body = b"[" + gemini_error(status, "INVALID_ARGUMENT", "Invalid JSON payload received.") + b"]"
    server.reply(Reply(status, body, content_type="application/json"), sse("text"))
    deltas, error = await play(server)
    assert deltas == []
    assert error is not None and error.status == status and not error.retryable
    assert "Invalid JSON payload received." in str(error)
    assert len(server.requests) == 1


async def test_the_key_never_appears_in_an_error(server):
    message = f"API key not valid. Please pass a valid API key. (key={KEY})"
    server.reply(
        Reply(400, gemini_error(400, "INVALID_ARGUMENT", message), content_type="application/json")
    )
    _, error = await play(server)
    assert error is not None
    assert KEY not in str(error) and KEY[: len(KEY) // 2] not in str(error)
    assert "API key not valid" in str(error)
