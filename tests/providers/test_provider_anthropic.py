"""The Anthropic adapter against a real HTTP server replaying recorded-shape Messages streams."""

from __future__ import annotations

import json
import time

import pytest

from model_server import ModelServer, Reply, sse_fixture
from moot.core.assemble import TurnBuilder
from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    Thinking,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from moot.providers.anthropic import REDACTED_MARKER, AnthropicProvider
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

KEY = "sk-ant-api03-Zx9vK2mQ7pL4nR8sT1wY6uE3oI5aS0dFgH2jK4lM6nP8qR0sT2uV4wX6yZ8a-EfGhIjAA"
MODEL = "claude-sonnet-4-5-20250929"
READ_FILE = ToolSpec(
    "read_file",
    "Read a text file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
REQUEST = ModelRequest(
    model=f"anthropic/{MODEL}",
    system="You are moot, a coding agent.",
    messages=(UserMessage(content="Why does the last page repeat?"),),
    tools=(READ_FILE,),
)
SIGNATURE = (
    "EqQBCkgIBRABGAIiQNQi3Tt7yXbvZy2xBVh0WZkq5ohwTv1NpOkNmBcLz8Ad7qYpbXcoP9xYk3kR0bT8ybXr3UwQ6SEe"
    "Ku9CJf0s4gISDGxKs9vhC4TEv3mxSRoMwNbpqRlRr3oe8aWhIjCQ5eC8Q9Hd3fR0DyZlO6XytP2SMS3b/m2W5g3dAcBw"
    "Yh+hWxpj1X8Rbv4AYJnMZYsqEIJ0c/N8TKpxmX2e5rDo1ek="
)


def make_config(url: str = "https://api.anthropic.com", **changes: object) -> ProviderConfig:
    changes.setdefault("retry", RetryPolicy(base_delay=0.01))
    return ProviderConfig("anthropic", MODEL, base_url=url, api_key=KEY, **changes)  # type: ignore[arg-type]


def fixture(name: str) -> Reply:
    return Reply(body=sse_fixture("anthropic", name))


def report(usage: Usage) -> UsageReport:
    return UsageReport(usage, cost_usd=lookup(f"anthropic/{MODEL}").cost(usage))


async def play(
    server: ModelServer, request: ModelRequest = REQUEST, **changes: object
) -> list[Delta]:
    provider = AnthropicProvider(make_config(server.url, **changes))
    try:
        return [delta async for delta in provider.stream(request)]
    finally:
        await provider.aclose()


async def play_to_error(
    server: ModelServer, request: ModelRequest = REQUEST, **changes: object
) -> tuple[list[Delta], ProviderError]:
    """The deltas that arrived before the call failed, and its error."""
    provider = AnthropicProvider(make_config(server.url, **changes))
    deltas: list[Delta] = []

    async def drain() -> None:
        async for delta in provider.stream(request):
            deltas.append(delta)

    try:
        with pytest.raises(ProviderError) as caught:
            await drain()
    finally:
        await provider.aclose()
    return deltas, caught.value


def assemble(deltas: list[Delta]) -> AssistantMessage:
    turn = TurnBuilder()
    for delta in deltas:
        turn.add(delta)
    return AssistantMessage(
        content=turn.text, thinking=turn.thinking, tool_calls=turn.tool_calls(())
    )


TEXT_DELTAS = [
    TextPart("The tests"),
    TextPart(" pass now: the off-by-one"),
    TextPart(" in `paginate` is fixed."),
    report(
        Usage(input_tokens=12, output_tokens=17, cache_read_tokens=20480, cache_write_tokens=1843)
    ),
    Finish("end_turn"),
]


# ---- streams ------------------------------------------------------------------------------


async def test_plain_text_streams_with_cached_usage_and_the_exact_request(
    server: ModelServer,
) -> None:
    server.reply(fixture("text"))
    assert await play(server) == TEXT_DELTAS
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "text/event-stream"
    assert "authorization" not in sent.headers
    assert sent.json == {
        "model": MODEL,
        "max_tokens": 64000,
        "system": [
            {
                "type": "text",
                "text": "You are moot, a coding agent.",
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Why does the last page repeat?",
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            }
        ],
        "tools": [
            {
                "name": "read_file",
                "description": "Read a text file.",
                "input_schema": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "stream": True,
    }


async def test_one_tool_call_streams_its_argument_text(server: ModelServer) -> None:
    server.reply(fixture("tool_call"))
    deltas = await play(server)
    assert deltas == [
        TextPart("I'll read the file first."),
        ToolCallStart(0, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read_file"),
        ToolCallArgs(0, '{"path": "src/'),
        ToolCallArgs(0, 'pager.py", "limit": 40}'),
        report(Usage(input_tokens=472, output_tokens=71)),
        Finish("tool_use"),
    ]
    assert assemble(deltas).tool_calls == (
        ToolCall(
            id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name="read_file",
            arguments={"path": "src/pager.py", "limit": 40},
        ),
    )


async def test_parallel_tool_calls_are_numbered_in_order(server: ModelServer) -> None:
    server.reply(fixture("parallel_tools"))
    assert await play(server) == [
        ToolCallStart(0, "toolu_01GrepWLq3k9bYk1mZ8vYQ2s", "grep"),
        ToolCallArgs(0, '{"pattern": "def pag'),
        ToolCallArgs(0, 'inate"}'),
        ToolCallStart(1, "toolu_01LsDr8nE4Xh6TgHqBcW7pFa", "list_dir"),
        ToolCallArgs(1, '{"path": "tests"}'),
        ToolCallStart(2, "toolu_01Vz6CqPwXy2hNbRmS4eTgUo", "git_status"),
        report(
            Usage(input_tokens=9, output_tokens=118, cache_read_tokens=4096, cache_write_tokens=310)
        ),
        Finish("tool_use"),
    ]


async def test_thinking_streams_and_goes_back_signed_and_unchanged(server: ModelServer) -> None:
    server.reply(fixture("thinking"), fixture("text"))
    deltas = await play(server, reasoning_effort="medium")
    assert deltas == [
        ThinkingPart("The loop runs while i <= len(items), "),
        ThinkingPart("so the last page reads one past the end."),
        ThinkingPart("", signature=SIGNATURE),
        TextPart("The bound should be `i < len(items)`."),
        report(Usage(input_tokens=58, output_tokens=96)),
        Finish("end_turn"),
    ]
    assert server.requests[0].json["thinking"] == {"type": "enabled", "budget_tokens": 4096}

    answer = assemble(deltas)
    follow_up = UserMessage(content="Fix it.")
    await play(server, ModelRequest(MODEL, "", (*REQUEST.messages, answer, follow_up)))
    assert server.requests[1].json["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The loop runs while i <= len(items), "
                "so the last page reads one past the end.",
                "signature": SIGNATURE,
            },
            {"type": "text", "text": "The bound should be `i < len(items)`."},
        ],
    }


async def test_redacted_thinking_goes_back_as_its_opaque_data(server: ModelServer) -> None:
    server.reply(fixture("redacted_thinking"), fixture("text"))
    body = sse_fixture("anthropic", "redacted_thinking").decode()
    data = json.loads(body.split("data: ")[2].split("\n")[0])["content_block"]["data"]
    second = json.loads(body.split("data: ")[6].split("\n")[0])["delta"]["signature"]
    deltas = await play(server)
    assert deltas == [
        ThinkingPart("", signature=json.dumps({REDACTED_MARKER: data})),
        ThinkingPart("Check the fixture first."),
        ThinkingPart("", signature=second),
        TextPart("Done."),
        report(Usage(input_tokens=31, output_tokens=212)),
        Finish("end_turn"),
    ]

    await play(server, ModelRequest(MODEL, "", (*REQUEST.messages, assemble(deltas))))
    assert server.requests[1].json["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": data},
        {"type": "thinking", "thinking": "Check the fixture first.", "signature": second},
        {"type": "text", "text": "Done.", "cache_control": {"type": "ephemeral"}},
    ]


async def test_tool_argument_text_that_does_not_parse_is_passed_through(
    server: ModelServer,
) -> None:
    server.reply(fixture("bad_tool_args"))
    deltas = await play(server)
    assert deltas[:3] == [
        ToolCallStart(0, "toolu_01Bq8sTn4VmX2kR7cW9pL3dH", "write_file"),
        ToolCallArgs(0, '{"path": "notes.md", '),
        ToolCallArgs(0, '"content": "# TODO'),
    ]
    assert deltas[-1] == Finish("max_tokens")
    [call] = assemble(deltas).tool_calls
    assert call.raw_arguments == '{"path": "notes.md", "content": "# TODO'
    assert call.arguments_error is not None


# ---- the request --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.anthropic.com",
        "https://api.anthropic.com/",
        "https://api.anthropic.com/v1",
        "https://api.anthropic.com/v1/",
    ],
)
def test_the_url_is_the_messages_endpoint_however_the_base_is_written(base_url: str) -> None:
    url, _, _ = AnthropicProvider(make_config(base_url)).build_request(REQUEST)
    assert url == "https://api.anthropic.com/v1/messages"


def test_the_key_travels_only_in_its_header_and_extra_headers_are_added() -> None:
    config = make_config(headers={"anthropic-beta": "context-1m-2025-08-07"})
    url, headers, _ = AnthropicProvider(config).build_request(REQUEST)
    assert KEY not in url
    assert headers == {
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
        "x-api-key": KEY,
        "anthropic-beta": "context-1m-2025-08-07",
    }
    keyless = ProviderConfig("anthropic", MODEL, base_url="http://proxy.local")
    assert "x-api-key" not in AnthropicProvider(keyless).build_request(REQUEST)[1]


def test_a_conversation_maps_to_alternating_turns_with_tool_results_first() -> None:
    png = Attachment(mime_type="image/png", data="iVBORw0KGgo=")
    messages = (
        UserMessage(content="What is on this screen?", attachments=(png,)),
        AssistantMessage(
            content="Let me look.",
            thinking=(Thinking(text="lost in a cut-off stream"),),
            tool_calls=(
                ToolCall(id="toolu_01A", name="read_file", arguments={"path": "a.py"}),
                ToolCall(
                    id="toolu_01B",
                    name="read_file",
                    arguments_error="arguments are not valid JSON",
                    raw_arguments='{"path": ',
                ),
            ),
        ),
        ToolResultMessage(tool_call_id="toolu_01A", name="read_file", content="print(1)"),
        ToolResultMessage(
            tool_call_id="toolu_01B",
            name="read_file",
            content="arguments are not valid JSON",
            is_error=True,
            attachments=(png,),
        ),
        UserMessage(content="Also check b.py."),
    )
    request = ModelRequest(MODEL, "", messages)
    _, _, body = AnthropicProvider(make_config()).build_request(request)
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert "system" not in body and "tools" not in body and "thinking" not in body
    assert body["messages"] == [
        {"role": "user", "content": [image, {"type": "text", "text": "What is on this screen?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "read_file",
                    "input": {"path": "a.py"},
                },
                {"type": "tool_use", "id": "toolu_01B", "name": "read_file", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": [{"type": "text", "text": "print(1)"}],
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": [{"type": "text", "text": "arguments are not valid JSON"}, image],
                    "is_error": True,
                },
                {
                    "type": "text",
                    "text": "Also check b.py.",
                    "cache_control": {"type": "ephemeral"},
                },
            ],
        },
    ]


def test_thinking_from_another_adapter_is_not_sent_back() -> None:
    foreign = Thinking(text="openai reasoning", signature='{"encrypted_content": "gAAAAB..."}')
    answer = AssistantMessage(content="ok", thinking=(foreign,))
    _, _, body = AnthropicProvider(make_config()).build_request(
        ModelRequest(MODEL, "", (UserMessage(content="hi"), answer))
    )
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}
    ]


@pytest.mark.parametrize(
    ("effort", "asked", "max_tokens", "budget"),
    [
        ("low", None, 64000, 1024),
        ("high", None, 64000, 16384),
        ("medium", 8000, 8000, 4096),
        ("high", 2000, 18384, 16384),  # the budget comes on top of a small cap
        ("extreme", None, 64000, None),  # not an effort this API knows
        (None, None, 64000, None),
    ],
)
def test_thinking_budget_follows_the_reasoning_effort(
    effort: str | None, asked: int | None, max_tokens: int, budget: int | None
) -> None:
    provider = AnthropicProvider(make_config(reasoning_effort=effort))
    request = ModelRequest(MODEL, "", REQUEST.messages, max_output_tokens=asked)
    _, _, body = provider.build_request(request)
    assert body["max_tokens"] == max_tokens
    assert body.get("thinking") == (budget and {"type": "enabled", "budget_tokens": budget})


def test_no_thinking_for_a_model_the_catalog_does_not_know_to_think() -> None:
    config = ProviderConfig(
        "anthropic", "claude-3-5-haiku-20241022", base_url="x", reasoning_effort="high"
    )
    _, _, body = AnthropicProvider(config).build_request(REQUEST)
    assert "thinking" not in body
    assert body["max_tokens"] == 4096  # the catalog's default for unknown models


# ---- faults -------------------------------------------------------------------------------


async def test_429_is_retried_after_the_servers_retry_after(server: ModelServer) -> None:
    message = "Number of request tokens has exceeded your per-minute rate limit"
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": message}}
    body = json.dumps(error).encode()
    server.reply(
        Reply(429, body, headers={"retry-after": "0.2"}, content_type="application/json"),
        fixture("text"),
    )
    started = time.monotonic()
    assert await play(server) == TEXT_DELTAS
    assert time.monotonic() - started >= 0.2  # not the 0.01 s backoff of the policy
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "error"),
    [(500, "api_error"), (529, "overloaded_error")],
)
async def test_a_transient_status_is_retried(server: ModelServer, status: int, error: str) -> None:
    body = json.dumps({"type": "error", "error": {"type": error, "message": "Overloaded"}})
    server.reply(Reply(status, body.encode(), content_type="application/json"), fixture("text"))
    assert await play(server) == TEXT_DELTAS
    assert len(server.requests) == 2


async def test_529_that_persists_fails_retryable_after_every_try(server: ModelServer) -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    server.reply(*[Reply(529, body, content_type="application/json")] * 2)
    deltas, error = await play_to_error(server, retry=RetryPolicy(attempts=2, base_delay=0.01))
    assert deltas == []
    assert (error.status, error.retryable) == (529, True)
    assert error.message == "Overloaded (after 2 tries)"


async def test_an_overloaded_event_before_output_is_retried(server: ModelServer) -> None:
    server.reply(fixture("overloaded"), fixture("text"))
    assert await play(server) == TEXT_DELTAS
    assert len(server.requests) == 2


async def test_an_overloaded_event_after_output_keeps_the_text_and_fails(
    server: ModelServer,
) -> None:
    server.reply(fixture("error_after_text"), fixture("text"))
    deltas, error = await play_to_error(server)
    assert deltas == [TextPart("Looking at")]
    assert (error.message, error.retryable) == ("Overloaded", True)
    assert error.details == {"type": "overloaded_error"}
    assert len(server.requests) == 1


async def test_an_invalid_request_event_is_not_retried(server: ModelServer) -> None:
    server.reply(fixture("invalid_request"), fixture("text"))
    _, error = await play_to_error(server)
    assert error.retryable is False
    assert "Expected `thinking` or `redacted_thinking`" in str(error)
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401])
async def test_client_errors_are_never_retried_and_carry_the_servers_message(
    server: ModelServer, status: int
) -> None:
    message = "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens"
    body = json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    )
    server.reply(Reply(status, body.encode(), content_type="application/json"), fixture("text"))
    _, error = await play_to_error(server)
    assert (error.status, error.retryable) == (status, False)
    assert str(error) == f"anthropic/{MODEL} (HTTP {status}): {message}"
    assert len(server.requests) == 1


async def test_an_error_message_never_contains_the_key(server: ModelServer) -> None:
    body = json.dumps(
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": f"invalid x-api-key: {KEY}"},
        }
    )
    server.reply(Reply(401, body.encode(), content_type="application/json"))
    _, error = await play_to_error(server)
    assert KEY not in str(error) and KEY[: len(KEY) // 2] not in repr(error)
    assert "invalid x-api-key" in error.message
    assert KEY not in server.requests[0].path


async def test_a_reset_before_the_first_byte_is_retried(server: ModelServer) -> None:
    server.reply(Reply(fault="reset_before"), fixture("text"))
    assert await play(server) == TEXT_DELTAS
    assert len(server.requests) == 2


def _after_first_text(name: str) -> int:
    """The offset just past the first text delta event of a fixture."""
    body = sse_fixture("anthropic", name)
    return body.index(b"event: content_block_delta", body.index(b"text_delta") + 1)


async def test_a_reset_after_output_keeps_the_text_and_is_not_retried(
    server: ModelServer,
) -> None:
    cut = _after_first_text("text")
    server.reply(
        Reply(body=sse_fixture("anthropic", "text"), fault="reset_after", fault_at=cut),
        fixture("text"),
    )
    deltas, error = await play_to_error(server)
    assert deltas == [TextPart("The tests")]
    assert error.retryable is True
    assert len(server.requests) == 1


async def test_a_truncated_stream_keeps_the_text_and_fails(server: ModelServer) -> None:
    cut = _after_first_text("text")
    server.reply(
        Reply(body=sse_fixture("anthropic", "text"), fault="truncate", fault_at=cut),
        fixture("text"),
    )
    deltas, error = await play_to_error(server)
    assert deltas == [TextPart("The tests")]
    assert error.retryable is True
    assert len(server.requests) == 1


async def test_a_stream_that_ends_cleanly_without_message_stop_is_truncated(
    server: ModelServer,
) -> None:
    server.reply(fixture("no_message_stop"), fixture("text"))
    deltas, error = await play_to_error(server)
    assert deltas == [TextPart("Half an")]
    assert error.message == "the stream ended before message_stop"
    assert len(server.requests) == 1


async def test_a_stream_cut_before_any_output_is_retried(server: ModelServer) -> None:
    body = sse_fixture("anthropic", "text")
    server.reply(Reply(body=body, fault="truncate", fault_at=body.index(b"usage")), fixture("text"))
    assert await play(server) == TEXT_DELTAS
    assert len(server.requests) == 2


async def test_a_malformed_json_line_is_retried_then_reported(server: ModelServer) -> None:
    server.reply(fixture("malformed"), fixture("text"))
    assert await play(server) == TEXT_DELTAS
    assert len(server.requests) == 2

    server.reply(fixture("malformed"))
    _, error = await play_to_error(server, retry=RetryPolicy(attempts=1))
    assert error.message == "the server sent malformed JSON in a `content_block_start` event"


async def test_a_server_slower_than_the_read_timeout_is_retried(server: ModelServer) -> None:
    server.reply(
        Reply(body=sse_fixture("anthropic", "text"), fault="slow", delay=1), fixture("text")
    )
    assert await play(server, read_timeout=0.2) == TEXT_DELTAS
    assert len(server.requests) == 2

    server.reply(Reply(body=b"", fault="slow", delay=1))
    _, error = await play_to_error(server, read_timeout=0.2, retry=RetryPolicy(attempts=1))
    assert error.message == "no data for 0.2s (read timeout)"
    assert error.retryable is True
