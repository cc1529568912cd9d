"""The OpenAI Responses adapter against a real HTTP server replaying recorded-shape streams."""

from __future__ import annotations

import json
import time

import httpx
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
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.openai_responses import OpenAIResponsesProvider

API = "openai_responses"
KEY = "sk-proj-T3stKeyAbCdEfGh1234567890xyz"
SYSTEM = "You are moot, a coding agent."
HELLO = ModelRequest(model="openai/gpt-4.1", system=SYSTEM, messages=(UserMessage(content="Hi"),))
READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file of the workspace.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
HELLO_DELTAS = [
    *(TextPart(t) for t in ["Hello", "!", " How", " can", " I", " help", " you", " today", "?"]),
    UsageReport(
        Usage(input_tokens=395, output_tokens=11, cache_read_tokens=1920),
        cost_usd=(395 * 2.0 + 11 * 8.0 + 1920 * 0.5 + 0 * 2.0) / 1_000_000,
    ),
    Finish("completed"),
]


def provider_for(
    server: ModelServer, model: str = "gpt-4.1", **settings: object
) -> OpenAIResponsesProvider:
    settings.setdefault("retry", RetryPolicy(base_delay=0.01))
    config = ProviderConfig(
        provider="openai", model=model, base_url=f"{server.url}/v1", api_key=KEY, **settings
    )
    return OpenAIResponsesProvider(config)


async def collect(provider: OpenAIResponsesProvider, request: ModelRequest = HELLO) -> list[Delta]:
    try:
        return [delta async for delta in provider.stream(request)]
    finally:
        await provider.aclose()


async def collect_failure(
    provider: OpenAIResponsesProvider, request: ModelRequest = HELLO
) -> tuple[list[Delta], ProviderError]:
    """The deltas that arrived before the call failed, and the failure."""
    deltas: list[Delta] = []

    async def drain() -> None:
        async for delta in provider.stream(request):
            deltas.append(delta)

    with pytest.raises(ProviderError) as caught:
        await drain()
    await provider.aclose()
    return deltas, caught.value


def fixture_item(name: str, item_type: str) -> dict:
    """The finished output item of `item_type` in a fixture, as the server sent it."""
    for line in sse_fixture(API, name).decode().splitlines():
        if line.startswith("data: "):
            data = json.loads(line[6:])
            if data["type"] == "response.output_item.done" and data["item"]["type"] == item_type:
                return data["item"]
    raise LookupError(item_type)


def end_of_first(body: bytes, event: bytes) -> int:
    """The byte offset just past the first `event` in an SSE body."""
    return body.index(b"\n\n", body.index(b"event: " + event)) + 2


# --- requests --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "base_url",
    [
        "https://api.openai.com/v1",
        "https://api.openai.com/v1/",
        "https://api.openai.com",
        "https://api.openai.com/",
    ],
)
def test_the_url_takes_the_base_with_or_without_v1(base_url: str) -> None:
    config = ProviderConfig(provider="openai", model="gpt-4.1", base_url=base_url, api_key=KEY)
    url, headers, _ = OpenAIResponsesProvider(config).build_request(HELLO)
    assert url == "https://api.openai.com/v1/responses"
    assert headers == {"authorization": f"Bearer {KEY}"}


def test_a_keyless_local_server_gets_no_authorization_but_the_configured_headers() -> None:
    config = ProviderConfig(
        provider="local",
        model="gpt-oss-20b",
        base_url="http://127.0.0.1:8000/v1",
        headers={"x-team": "moot"},
    )
    _, headers, body = OpenAIResponsesProvider(config).build_request(HELLO)
    assert headers == {"x-team": "moot"}
    # A model the catalog does not know may reason: ask for its reasoning to send back.
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 4096
    assert "reasoning" not in body


def test_a_whole_conversation_maps_to_input_items() -> None:
    reasoning = fixture_item("reasoning", "reasoning")
    config = ProviderConfig(
        provider="openai",
        model="gpt-5-mini",
        base_url="https://api.openai.com/v1",
        api_key=KEY,
        reasoning_effort="low",
    )
    signature = json.dumps(
        {
            "id": reasoning["id"],
            "encrypted_content": reasoning["encrypted_content"],
            "summary": reasoning["summary"],
        }
    )
    png = Attachment(mime_type="image/png", data="iVBORw0KGgoAAAANSUhEUg==")
    request = ModelRequest(
        model="openai/gpt-5-mini",
        system=SYSTEM,
        tools=(READ_FILE,),
        max_output_tokens=2048,
        messages=(
            UserMessage(content="Why does this fail?", attachments=(png,)),
            AssistantMessage(
                content="Let me look.",
                thinking=(
                    Thinking(text="**Checking**", signature=signature),
                    Thinking(text="Anthropic's", signature="EqQBCkgIBxABGAIiQ"),
                    Thinking(text="unsigned"),
                ),
                tool_calls=(
                    ToolCall(id="call_a1", name="read_file", arguments={"path": "tést.py"}),
                    ToolCall(
                        id="call_b2",
                        name="read_file",
                        arguments_error="arguments are not valid JSON",
                        raw_arguments='{"path": "b.py',
                    ),
                    ToolCall(id="call_c3", name="screenshot"),
                ),
            ),
            ToolResultMessage(tool_call_id="call_a1", name="read_file", content="assert 1 == 2"),
            ToolResultMessage(
                tool_call_id="call_b2",
                name="read_file",
                content="arguments are not valid JSON",
                is_error=True,
            ),
            ToolResultMessage(
                tool_call_id="call_c3", name="screenshot", content="1 image", attachments=(png,)
            ),
            UserMessage(content="Go on."),
        ),
    )
    _, _, body = OpenAIResponsesProvider(config).build_request(request)
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}
    assert body == {
        "model": "gpt-5-mini",
        "instructions": SYSTEM,
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Why does this fail?"}, image],
            },
            # Only this adapter's reasoning goes back, unchanged, without its id (store: false).
            {
                "type": "reasoning",
                "summary": reasoning["summary"],
                "encrypted_content": reasoning["encrypted_content"],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Let me look."}],
            },
            {
                "type": "function_call",
                "call_id": "call_a1",
                "name": "read_file",
                "arguments": '{"path":"tést.py"}',
            },
            {
                "type": "function_call",
                "call_id": "call_b2",
                "name": "read_file",
                "arguments": '{"path": "b.py',
            },
            {
                "type": "function_call",
                "call_id": "call_c3",
                "name": "screenshot",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_a1", "output": "assert 1 == 2"},
            {
                "type": "function_call_output",
                "call_id": "call_b2",
                "output": "arguments are not valid JSON",
            },
            {"type": "function_call_output", "call_id": "call_c3", "output": "1 image"},
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "Images returned by the screenshot call call_c3:",
                    },
                    image,
                ],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Go on."}],
            },
        ],
        "tools": [
            {
                "type": "function",
                "name": "read_file",
                "description": "Read a file of the workspace.",
                "parameters": dict(READ_FILE.parameters),
                "strict": False,
            }
        ],
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 2048,
        "reasoning": {"effort": "low", "summary": "auto"},
    }


def test_reasoning_effort_is_not_sent_to_a_model_that_does_not_think() -> None:
    config = ProviderConfig(
        provider="openai", model="gpt-4.1", base_url="https://x/v1", reasoning_effort="high"
    )
    _, _, body = OpenAIResponsesProvider(config).build_request(HELLO)
    assert "reasoning" not in body and "include" not in body


# --- streams ---------------------------------------------------------------------------------


async def test_plain_text_streams_and_the_request_is_exact(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "text")))
    assert await collect(provider_for(server)) == HELLO_DELTAS
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"
    assert request.json == {
        "model": "gpt-4.1",
        "instructions": SYSTEM,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}
        ],
        "store": False,
        "stream": True,
        "max_output_tokens": 32768,
    }


async def test_one_tool_call(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "tool_call")))
    request = ModelRequest(
        model="openai/gpt-4.1", system=SYSTEM, messages=HELLO.messages, tools=(READ_FILE,)
    )
    deltas = await collect(provider_for(server), request)
    assert deltas == [
        ToolCallStart(0, "call_Qx7pD2vN8kLm4RtY6sWz1aBc", "read_file"),
        *(ToolCallArgs(0, t) for t in ['{"', "path", '":"', "src", "/app", ".py", '"}']),
        UsageReport(Usage(input_tokens=1832, output_tokens=19), (1832 * 2.0 + 19 * 8.0) / 1e6),
        Finish("completed"),
    ]
    assert server.requests[0].json["tools"][0]["name"] == "read_file"


async def test_text_then_parallel_tool_calls(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "parallel_tool_calls")))
    deltas = await collect(provider_for(server))
    assert deltas == [
        *(TextPart(t) for t in ["I'll", " read", " both", " files", "."]),
        ToolCallStart(0, "call_3fGh7JkL9mNp1QrS5tUv8WxY", "read_file"),
        *(ToolCallArgs(0, t) for t in ['{"path', '":"README', '.md"}']),
        ToolCallStart(1, "call_8aBc2DeF4gHi6JkL0mNo3PqR", "read_file"),
        *(ToolCallArgs(1, t) for t in ['{"path', '":"pyproject', '.toml"}']),
        UsageReport(
            Usage(input_tokens=512, output_tokens=57, cache_read_tokens=3584),
            (512 * 2.0 + 57 * 8.0 + 3584 * 0.5 + 0 * 2.0) / 1e6,
        ),
        Finish("completed"),
    ]


async def test_reasoning_summaries_stream_and_the_item_goes_back_unchanged(
    server: ModelServer,
) -> None:
    server.reply(Reply(body=sse_fixture(API, "reasoning")))
    provider = provider_for(server, "gpt-5-mini", reasoning_effort="high")
    deltas = await collect(provider)
    item = fixture_item("reasoning", "reasoning")
    signature = json.dumps(
        {
            "id": item["id"],
            "encrypted_content": item["encrypted_content"],
            "summary": item["summary"],
        },
        separators=(",", ":"),
    )
    first = ["**Checking", " the", " test", " failure", "**\n\nThe", " assertion", " compares"]
    first += [" a", " list", " to", " a", " tuple", "."]
    second = ["**Planning", " the", " fix", "**\n\nConvert", " the", " result", " to", " a"]
    second += [" tuple", " before", " comparing", "."]
    text = ["The", " test", " compares", " a", " list", " with", " a", " tuple", "; "]
    text += ["convert", " first", "."]
    assert deltas == [
        *(ThinkingPart(t) for t in first),
        ThinkingPart("\n\n"),
        *(ThinkingPart(t) for t in second),
        ThinkingPart("", signature=signature),
        *(TextPart(t) for t in text),
        UsageReport(
            Usage(input_tokens=256, output_tokens=412, cache_read_tokens=4864),
            (256 * 0.25 + 412 * 2.0 + 4864 * 0.025 + 0 * 0.25) / 1e6,
        ),
        Finish("completed"),
    ]
    assert server.requests[0].json["reasoning"] == {"effort": "high", "summary": "auto"}
    assert server.requests[0].json["include"] == ["reasoning.encrypted_content"]

    # The assembled turn, sent back next time, carries the reasoning item as it came.
    turn = TurnBuilder()
    for delta in deltas:
        turn.add(delta)
    [thinking] = turn.thinking
    assert thinking.text == "".join(first) + "\n\n" + "".join(second)
    follow_up = ModelRequest(
        model="openai/gpt-5-mini",
        system=SYSTEM,
        messages=(
            *HELLO.messages,
            AssistantMessage(content=turn.text, thinking=turn.thinking),
            UserMessage(content="Do it."),
        ),
    )
    _, _, body = provider.build_request(follow_up)
    sent_back = {k: v for k, v in item.items() if k != "id"}
    assert body["input"][1] == {"type": "reasoning", **sent_back}


async def test_an_incomplete_response_keeps_its_text_and_says_why(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "incomplete")))
    deltas = await collect(provider_for(server))
    pieces = ["The", " module", " defines", " three", " classes", ":", " `", "Parser", "`,"]
    pieces += [" `", "Lexer", "`", " and"]
    assert deltas == [
        *(TextPart(t) for t in pieces),
        UsageReport(Usage(input_tokens=912, output_tokens=16), (912 * 2.0 + 16 * 8.0) / 1e6),
        Finish("max_output_tokens"),
    ]


async def test_tool_arguments_that_are_not_json_pass_through(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "bad_arguments")))
    deltas = await collect(provider_for(server))
    assert deltas[:4] == [
        ToolCallStart(0, "call_Vb5nM3kJ1hG9fD7sA2qW4eRt", "read_file"),
        ToolCallArgs(0, '{"path":'),
        ToolCallArgs(0, ' "src/'),
        ToolCallArgs(0, "app.py'"),
    ]
    turn = TurnBuilder()
    for delta in deltas:
        turn.add(delta)
    [call] = turn.tool_calls(taken=())
    assert call.raw_arguments == '{"path": "src/app.py\'' and call.arguments_error


async def test_arguments_sent_whole_without_deltas_are_still_delivered(
    server: ModelServer,
) -> None:
    """Some servers that speak this API send a call's arguments only in `output_item.done`."""
    body = b"".join(
        event + b"\n\n"
        for event in sse_fixture(API, "tool_call").split(b"\n\n")
        if event and b"function_call_arguments.delta" not in event
    )
    server.reply(Reply(body=body))
    deltas = await collect(provider_for(server))
    assert deltas[:2] == [
        ToolCallStart(0, "call_Qx7pD2vN8kLm4RtY6sWz1aBc", "read_file"),
        ToolCallArgs(0, '{"path":"src/app.py"}'),
    ]


# --- errors inside the stream ----------------------------------------------------------------


async def test_a_rate_limit_error_event_carries_the_wait_and_is_retried(
    server: ModelServer,
) -> None:
    server.reply(Reply(body=sse_fixture(API, "error")), Reply(body=sse_fixture(API, "text")))
    assert await collect(provider_for(server)) == HELLO_DELTAS
    assert len(server.requests) == 2


async def test_the_error_event_becomes_a_provider_error(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "error")))
    deltas, error = await collect_failure(provider_for(server, retry=RetryPolicy(attempts=1)))
    assert deltas == []
    assert error.retryable and error.retry_after == pytest.approx(0.02)
    assert "Rate limit reached for gpt-4.1" in error.message
    assert error.details == {"code": "rate_limit_exceeded"}
    assert str(error).startswith("openai/gpt-4.1: Rate limit reached")


async def test_a_failed_response_with_a_server_error_is_retried(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "failed")), Reply(body=sse_fixture(API, "text")))
    assert await collect(provider_for(server)) == HELLO_DELTAS
    assert len(server.requests) == 2


async def test_a_failed_response_with_a_final_error_is_not_retried(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "failed_invalid_prompt")))
    _, error = await collect_failure(provider_for(server))
    assert len(server.requests) == 1
    assert not error.retryable
    assert error.message.startswith("Invalid prompt: your prompt was flagged")
    assert error.message.endswith("(invalid_prompt)")


async def test_malformed_json_before_output_is_retried(server: ModelServer) -> None:
    server.reply(
        Reply(body=sse_fixture(API, "malformed_json")), Reply(body=sse_fixture(API, "text"))
    )
    assert await collect(provider_for(server)) == HELLO_DELTAS
    assert len(server.requests) == 2


async def test_malformed_json_names_the_event(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "malformed_json")))
    _, error = await collect_failure(provider_for(server, retry=RetryPolicy(attempts=1)))
    assert error.message == "the server sent malformed JSON in a `response.in_progress` event"


# --- HTTP and transport faults ---------------------------------------------------------------


async def test_429_waits_as_long_as_the_server_asks(server: ModelServer) -> None:
    limited = (
        b'{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'
    )
    server.reply(
        Reply(429, limited, headers={"retry-after": "0.2"}, content_type="application/json"),
        Reply(body=sse_fixture(API, "text")),
    )
    started = time.monotonic()
    assert await collect(provider_for(server)) == HELLO_DELTAS
    assert time.monotonic() - started >= 0.2
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
async def test_a_transient_status_is_retried(server: ModelServer, status: int) -> None:
    body = (
        b'{"error":{"message":"The server had an error while processing your request.",'
        b'"type":"server_error"}}'
    )
    server.reply(
        Reply(status, body, content_type="application/json"), Reply(body=sse_fixture(API, "text"))
    )
    assert await collect(provider_for(server)) == HELLO_DELTAS
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [400, 401])
async def test_a_client_error_is_never_retried_and_never_shows_the_key(
    server: ModelServer, status: int
) -> None:
    # OpenAI masks the key it echoes; this server does not, to prove moot redacts it.
    message = (
        f"Incorrect API key provided: {KEY}. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
        if status == 401
        else "Invalid type for 'input[0].content': expected one of an array or a string."
    )
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    server.reply(Reply(status, body.encode(), content_type="application/json"))
    _, error = await collect_failure(provider_for(server))
    assert len(server.requests) == 1
    assert (error.status, error.retryable) == (status, False)
    assert message.split(":")[0] in str(error)
    assert KEY not in str(error) and KEY[: len(KEY) // 2] not in str(error)


async def test_a_reset_before_the_first_byte_is_retried(server: ModelServer) -> None:
    server.reply(Reply(fault="reset_before"), Reply(body=sse_fixture(API, "text")))
    assert await collect(provider_for(server)) == HELLO_DELTAS
    assert len(server.requests) == 2


async def test_a_reset_after_output_delivers_the_text_then_fails(server: ModelServer) -> None:
    body = sse_fixture(API, "text")
    cut = end_of_first(body, b"response.output_text.delta")
    server.reply(Reply(body=body, fault="reset_after", fault_at=cut, chunk_size=cut))
    deltas, error = await collect_failure(provider_for(server))
    assert deltas == [TextPart("Hello")]
    assert len(server.requests) == 1
    assert error.message.startswith("connection failed")


async def test_a_truncated_stream_fails_after_the_partial_text(server: ModelServer) -> None:
    body = sse_fixture(API, "text")
    cut = end_of_first(body, b"response.output_item.done")
    server.reply(Reply(body=body, fault="truncate", fault_at=cut))
    deltas, error = await collect_failure(provider_for(server))
    assert deltas == HELLO_DELTAS[:9]
    assert len(server.requests) == 1 and error.retryable


async def test_a_stream_that_ends_cleanly_without_completing_is_truncated(
    server: ModelServer,
) -> None:
    body = sse_fixture(API, "text")
    server.reply(Reply(body=body[: end_of_first(body, b"response.output_item.done")]))
    deltas, error = await collect_failure(provider_for(server))
    assert deltas == HELLO_DELTAS[:9]
    assert error.message == "the stream ended before the response was completed"
    assert len(server.requests) == 1


async def test_a_server_slower_than_the_read_timeout_fails(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "text"), fault="slow", delay=1))
    provider = provider_for(server, read_timeout=0.2, retry=RetryPolicy(attempts=1))
    _, error = await collect_failure(provider)
    assert error.message == "no data for 0.2s (read timeout)" and error.retryable


# --- the client ------------------------------------------------------------------------------


async def test_aclose_closes_only_a_client_the_provider_made(server: ModelServer) -> None:
    server.reply(Reply(body=sse_fixture(API, "text")), Reply(body=sse_fixture(API, "text")))
    async with httpx.AsyncClient() as client:
        config = ProviderConfig(
            provider="openai", model="gpt-4.1", base_url=server.url, api_key=KEY
        )
        shared = OpenAIResponsesProvider(config, client=client)
        assert await collect(shared) == HELLO_DELTAS
        assert not client.is_closed
    own = provider_for(server)
    assert await collect(own) == HELLO_DELTAS
    assert own._client is None
