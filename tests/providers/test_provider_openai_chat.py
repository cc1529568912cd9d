"""The OpenAI Chat Completions adapter against a real local server replaying recorded shapes.

Each test asserts the deltas the adapter produced and, where it matters, the request it sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from model_server import ModelServer, Reply, sse_fixture
from moot.core.agent import Agent
from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from moot.protocol.states import RunState
from moot.providers import credentials
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
from moot.providers.openai_chat import OpenAIChatProvider, chat_completions_url
from moot.providers.presets import PRESETS
from moot.providers.registry import resolve_model
from moot.tools.base import SideEffect, ToolResult, tool
from runtime_helpers import make_runtime, run_turn

KEY = "sk-proj-T3stK3y0nlyF0rT3sts9x8y7z6w5v4u3"
FAST = RetryPolicy(base_delay=0.01)
READ_FILE = ToolSpec(
    "read_file",
    "Read a file from the workspace.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
ASK = ModelRequest(
    model="openai/gpt-4.1", system="You are terse.", messages=[UserMessage(content="hi")]
)

MakeProvider = Callable[..., OpenAIChatProvider]


def fixture(name: str) -> bytes:
    return sse_fixture("openai_chat", name)


@pytest.fixture
async def make(server: ModelServer) -> AsyncIterator[MakeProvider]:
    made: list[OpenAIChatProvider] = []

    def build(**overrides: Any) -> OpenAIChatProvider:
        settings: dict[str, Any] = {
            "provider": "openai",
            "model": "gpt-4.1",
            "base_url": server.url,
            "api_key": KEY,
            "retry": FAST,
        }
        provider = OpenAIChatProvider(ProviderConfig(**{**settings, **overrides}))
        made.append(provider)
        return provider

    yield build
    for provider in made:
        await provider.aclose()


async def collect(provider: OpenAIChatProvider, request: ModelRequest = ASK) -> list[Delta]:
    return [delta async for delta in provider.stream(request)]


async def collect_until_error(
    provider: OpenAIChatProvider, request: ModelRequest = ASK
) -> tuple[list[Delta], ProviderError]:
    got: list[Delta] = []
    try:
        async for delta in provider.stream(request):
            got.append(delta)
    except ProviderError as error:
        return got, error
    pytest.fail(f"no ProviderError; the stream gave {got}")


def report(name: str, **tokens: int) -> UsageReport:
    usage = Usage(**tokens)
    return UsageReport(usage, lookup(name).cost(usage))


# --- happy paths -------------------------------------------------------------------------


async def test_plain_text_and_the_exact_request(server: ModelServer, make: MakeProvider) -> None:
    server.reply(Reply(body=fixture("text")))
    deltas = await collect(make())

    assert deltas == [
        TextPart("Hello"),
        TextPart("! How"),
        TextPart(" can I help"),
        TextPart(" with your code?"),
        report("openai/gpt-4.1", input_tokens=210, output_tokens=9, cache_read_tokens=1024),
        Finish("stop"),
    ]
    assert deltas[-2].cost_usd == pytest.approx((210 * 2.0 + 9 * 8.0 + 1024 * 0.5) / 1e6)
    [sent] = server.requests
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.json == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 32768,
    }


async def test_one_tool_call_streams_its_argument_pieces(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("tool_call")))
    request = ModelRequest(
        model="openai/gpt-4.1", system="", messages=[UserMessage(content="x")], tools=[READ_FILE]
    )
    deltas = await collect(make(), request)

    assert deltas == [
        ToolCallStart(0, "call_Qx8mZ3vT1kR9yB2nL5pW7dFh", "read_file"),
        ToolCallArgs(0, '{"'),
        ToolCallArgs(0, "path"),
        ToolCallArgs(0, '":"'),
        ToolCallArgs(0, "src/app.py"),
        ToolCallArgs(0, '"}'),
        report("openai/gpt-4.1", input_tokens=412, output_tokens=17),
        Finish("tool_calls"),
    ]
    body = server.requests[0].json
    assert body["messages"] == [{"role": "user", "content": "x"}]  # no empty system message
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file from the workspace.",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            },
        }
    ]


async def test_parallel_tool_calls_are_assembled_by_index(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("parallel_tool_calls")))
    deltas = await collect(make())

    assert deltas == [
        TextPart("Reading both files."),
        ToolCallStart(0, "call_A1b2C3d4E5f6G7h8I9j0K1l2", "read_file"),
        ToolCallArgs(0, '{"path": "a.py"}'),
        ToolCallStart(1, "call_M3n4O5p6Q7r8S9t0U1v2W3x4", "read_file"),
        ToolCallArgs(1, '{"path": '),
        ToolCallArgs(1, '"b.py"}'),
        report("openai/gpt-4.1", input_tokens=530, output_tokens=52),
        Finish("tool_calls"),
    ]


async def test_interleaved_tool_call_fragments_land_on_their_own_calls(
    server: ModelServer, make: MakeProvider
) -> None:
    """vLLM-style: fragments of three calls interleave; the third's name comes after its args."""
    server.reply(Reply(body=fixture("interleaved_tool_calls")))
    deltas = await collect(make(provider="vllm", model="Qwen/Qwen3-Coder-30B-A3B-Instruct"))

    assert deltas == [
        ToolCallStart(0, "chatcmpl-tool-3c1e9a", "grep"),
        ToolCallStart(1, "chatcmpl-tool-7d42bf", "glob"),
        ToolCallArgs(1, '{"pattern"'),
        ToolCallArgs(0, '{"pattern": "TODO"'),
        ToolCallArgs(1, ': "**/*.py"}'),
        ToolCallArgs(0, "}"),
        ToolCallStart(2, "chatcmpl-tool-e05a11", "read_file"),
        ToolCallArgs(2, '{"path": "setup.cfg"}'),
        UsageReport(Usage(input_tokens=2048, output_tokens=62), None),
        Finish("tool_calls"),
    ]


async def test_reasoning_content_becomes_thinking_and_cached_tokens_are_split_out(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("reasoning_content")))
    provider = make(provider="deepseek", model="deepseek-reasoner", reasoning_effort="high")
    deltas = await collect(provider)

    assert deltas == [
        ThinkingPart("The user"),
        ThinkingPart(" asks for the capital"),
        ThinkingPart(" of France."),
        TextPart("Paris"),
        TextPart("."),
        report(
            "deepseek/deepseek-reasoner",
            input_tokens=180,
            output_tokens=64,
            cache_read_tokens=1920,
        ),
        Finish("stop"),
    ]
    body = server.requests[0].json
    assert body["reasoning_effort"] == "high"  # the catalog says the model thinks
    assert body["max_tokens"] == 65536  # DeepSeek's dialect
    assert "max_completion_tokens" not in body


async def test_openrouter_reasoning_field_and_processing_comments(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("openrouter_reasoning")))
    provider = make(
        provider="openrouter",
        model="qwen/qwen3-235b-a22b-thinking-2507",
        base_url=server.url + "/api/v1/",
        headers={"X-Title": "moot"},
    )
    deltas = await collect(provider)

    assert deltas == [
        ThinkingPart("Check"),
        ThinkingPart(" the file first."),
        TextPart("Done."),
        UsageReport(Usage(input_tokens=300, output_tokens=40), None),
        Finish("stop"),
    ]
    sent = server.requests[0]
    assert sent.path == "/api/v1/chat/completions"
    assert sent.headers["x-title"] == "moot"


async def test_a_server_that_omits_done_after_a_finish_reason_is_complete(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("no_done_after_finish")))
    deltas = await collect(make(provider="ollama", model="qwen3-coder:30b", api_key=None))

    assert deltas == [TextPart("Hi"), TextPart(" there."), Finish("stop")]
    sent = server.requests[0]
    assert "authorization" not in sent.headers  # local ollama takes no key
    assert sent.json["max_tokens"] == 4096  # uncatalogued model: the conservative default


async def test_unparsable_tool_arguments_pass_through_as_text(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("bad_tool_args")))
    deltas = await collect(make(provider="ollama", model="qwen3-coder:30b", api_key=None))

    assert deltas == [
        ToolCallStart(0, "call_8e2x1h0q", "read_file"),
        ToolCallArgs(0, '{"path": "src/a.py", "limit": }'),
        UsageReport(Usage(input_tokens=880, output_tokens=31), None),
        Finish("tool_calls"),
    ]


# --- request shape -----------------------------------------------------------------------

PNG = Attachment(mime_type="image/png", data="iVBORw0KGgo=")


def test_a_conversation_maps_to_chat_messages() -> None:
    provider = OpenAIChatProvider(
        ProviderConfig("openai", "gpt-4.1", "https://api.openai.com/v1/", api_key=KEY)
    )
    request = ModelRequest(
        model="openai/gpt-4.1",
        system="Be brief.",
        max_output_tokens=1000,
        messages=[
            UserMessage(content="What is in this picture?", attachments=(PNG,)),
            AssistantMessage(
                content="Let me look.",
                thinking=(),
                tool_calls=(
                    ToolCall(id="call_1", name="read_file", arguments={"path": "é.py"}),
                    ToolCall(
                        id="call_2",
                        name="grep",
                        arguments_error="arguments are not valid JSON",
                        raw_arguments='{"pattern": ',
                    ),
                    ToolCall(id="call_3", name="screenshot"),
                ),
            ),
            ToolResultMessage(tool_call_id="call_1", name="read_file", content="print(1)"),
            ToolResultMessage(
                tool_call_id="call_2", name="grep", content="bad arguments", is_error=True
            ),
            ToolResultMessage(
                tool_call_id="call_3", name="screenshot", content="taken", attachments=(PNG,)
            ),
            AssistantMessage(content="A red square."),
            UserMessage(content="Thanks"),
        ],
    )
    url, headers, body = provider.build_request(request)

    assert url == "https://api.openai.com/v1/chat/completions"
    assert headers == {"Authorization": f"Bearer {KEY}"}
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assert body["max_completion_tokens"] == 1000
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "What is in this picture?"}, image],
        },
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "é.py"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"pattern": '},
                },
                {
                    "id": "call_3",
                    "type": "function",
                    "function": {"name": "screenshot", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"},
        {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"},
        {"role": "tool", "tool_call_id": "call_3", "content": "taken"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images from the screenshot result call_3:"},
                image,
            ],
        },
        {"role": "assistant", "content": "A red square."},
        {"role": "user", "content": "Thanks"},
    ]


def test_an_assistant_turn_with_only_tool_calls_has_null_content() -> None:
    provider = OpenAIChatProvider(ProviderConfig("openai", "gpt-4.1", "https://api.openai.com"))
    request = ModelRequest(
        model="openai/gpt-4.1",
        system="",
        messages=[
            AssistantMessage(tool_calls=(ToolCall(id="c", name="ls", arguments={}),)),
            ToolResultMessage(tool_call_id="c", name="ls", content="", attachments=(PNG,)),
        ],
    )
    url, headers, body = provider.build_request(request)

    assert url == "https://api.openai.com/v1/chat/completions"
    assert headers == {}  # no key, no Authorization header
    assert body["messages"][0]["content"] is None
    assert body["messages"][-1]["role"] == "user"  # images trail the last tool result too


def test_reasoning_effort_only_for_models_the_catalog_says_think() -> None:
    def body_for(model: str) -> dict[str, Any]:
        config = ProviderConfig("openai", model, "https://x/v1", reasoning_effort="low")
        return OpenAIChatProvider(config).build_request(ASK)[2]

    assert body_for("o3")["reasoning_effort"] == "low"
    assert "reasoning_effort" not in body_for("gpt-4.1")


def test_mistral_dialect_sends_max_tokens_and_no_stream_options() -> None:
    config = ProviderConfig("mistral", "devstral-medium-latest", PRESETS["mistral"].base_url)
    url, _, body = OpenAIChatProvider(config).build_request(ASK)

    assert url == "https://api.mistral.ai/v1/chat/completions"
    assert body["max_tokens"] == 32768
    assert "stream_options" not in body
    assert "max_completion_tokens" not in body


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
        ("https://api.openai.com", "https://api.openai.com/v1/chat/completions"),
        ("http://localhost:11434", "http://localhost:11434/v1/chat/completions"),
        ("http://localhost:11434/", "http://localhost:11434/v1/chat/completions"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions"),
        ("https://openrouter.ai/api", "https://openrouter.ai/api/v1/chat/completions"),
        ("https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1/chat/completions"),
        ("https://example.com/v2/", "https://example.com/v2/chat/completions"),
        ("https://example.com/v1beta", "https://example.com/v1beta/v1/chat/completions"),
        (
            "https://example.com/proxy/v1/chat/completions",
            "https://example.com/proxy/v1/chat/completions",
        ),
    ],
)
def test_base_url_normalisation(base_url: str, endpoint: str) -> None:
    assert chat_completions_url(base_url) == endpoint


@pytest.mark.parametrize(
    ("name", "endpoint"),
    [
        ("openai", "https://api.openai.com/v1/chat/completions"),
        ("ollama", "http://localhost:11434/v1/chat/completions"),
        ("lmstudio", "http://localhost:1234/v1/chat/completions"),
        ("vllm", "http://localhost:8000/v1/chat/completions"),
        ("openrouter", "https://openrouter.ai/api/v1/chat/completions"),
        ("groq", "https://api.groq.com/openai/v1/chat/completions"),
        ("deepseek", "https://api.deepseek.com/v1/chat/completions"),
        ("mistral", "https://api.mistral.ai/v1/chat/completions"),
        ("xai", "https://api.x.ai/v1/chat/completions"),
        ("together", "https://api.together.xyz/v1/chat/completions"),
        ("cerebras", "https://api.cerebras.ai/v1/chat/completions"),
    ],
)
def test_every_preset_reaches_its_endpoint(name: str, endpoint: str) -> None:
    preset = PRESETS[name]
    assert preset.name == name
    assert chat_completions_url(preset.resolve_base_url({})) == endpoint


def test_presets_read_base_url_and_key_from_the_environment() -> None:
    ollama, openai, vllm = PRESETS["ollama"], PRESETS["openai"], PRESETS["vllm"]
    env = {
        "OLLAMA_HOST": "127.0.0.1:11500",
        "OPENAI_BASE_URL": "https://gateway.example.com/openai/v1",
        "OPENAI_API_KEY": KEY,
    }

    assert chat_completions_url(ollama.resolve_base_url(env)) == (
        "http://127.0.0.1:11500/v1/chat/completions"
    )
    assert openai.resolve_base_url(env) == "https://gateway.example.com/openai/v1"
    assert vllm.key_optional


BASE_URL_VARIABLES = {
    "openai-chat": "OPENAI_BASE_URL",
    "ollama": "OLLAMA_HOST",
    "lmstudio": "LMSTUDIO_BASE_URL",
    "vllm": "VLLM_BASE_URL",
    "openrouter": "OPENROUTER_BASE_URL",
    "groq": "GROQ_BASE_URL",
    "deepseek": "DEEPSEEK_BASE_URL",
    "mistral": "MISTRAL_BASE_URL",
    "xai": "XAI_BASE_URL",
    "together": "TOGETHER_BASE_URL",
    "cerebras": "CEREBRAS_BASE_URL",
}
"""Every Chat Completions provider and the variable that points it elsewhere."""


def test_every_chat_completions_provider_has_a_base_url_variable() -> None:
    chat = {n for n, e in credentials.ENDPOINTS.items() if e.api == "openai_chat"}
    assert {n: credentials.ENDPOINTS[n].base_url_env for n in chat} == BASE_URL_VARIABLES


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
@pytest.mark.parametrize("name", list(BASE_URL_VARIABLES))
async def test_the_base_url_variable_reaches_the_server_with_or_without_v1(
    server: ModelServer, tmp_path: Path, name: str, suffix: str
) -> None:
    environ = {"MOOT_HOME": str(tmp_path), BASE_URL_VARIABLES[name]: server.url + suffix}
    environ |= {variable: KEY for variable in credentials.ENDPOINTS[name].key_env}
    provider = resolve_model(f"{name}/some-model", environ)
    assert isinstance(provider, OpenAIChatProvider)
    assert provider.config.base_url.startswith(server.url)  # else it would reach the real one
    server.reply(Reply(body=fixture("text")))
    try:
        deltas = await collect(provider)
    finally:
        await provider.aclose()
    assert deltas[-1] == Finish("stop")
    [sent] = server.requests
    # A bare host is Groq's SDK form (`https://api.groq.com`), which gets the SDK's own path.
    bare_groq = name == "groq" and suffix in ("", "/")
    path = "/openai/v1/chat/completions" if bare_groq else "/v1/chat/completions"
    assert (sent.method, sent.path) == ("POST", path)
    assert sent.json["model"] == "some-model"


async def test_ollama_host_without_a_scheme_reaches_the_server(
    server: ModelServer, tmp_path: Path
) -> None:
    environ = {"MOOT_HOME": str(tmp_path), "OLLAMA_HOST": f"127.0.0.1:{server.port}"}
    provider = resolve_model("ollama/qwen3-coder", environ)
    server.reply(Reply(body=fixture("no_done_after_finish")))
    try:
        await collect(provider)
    finally:
        await provider.aclose()
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]


# --- the catalog -------------------------------------------------------------------------


async def test_openai_chat_models_are_openais_in_the_catalog(
    server: ModelServer, tmp_path: Path
) -> None:
    """`openai-chat/gpt-4.1` is OpenAI's gpt-4.1 on another wire API: a tool result's image
    reaches it, its output cap is the catalog's, and its answers have a price."""

    @tool(side_effect=SideEffect.READ_ONLY)
    def read_file(path: str) -> ToolResult:
        """Read a file of the workspace."""
        return ToolResult(f"{path} is a picture", attachments=(PNG,))

    environ = {"MOOT_HOME": str(tmp_path), "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.url}
    provider = resolve_model("openai-chat/gpt-4.1", environ)
    server.reply(Reply(body=fixture("tool_call")), Reply(body=fixture("text")))
    try:
        finished, _ = await run_turn(make_runtime(Agent("main", model=provider), tools=[read_file]))
    finally:
        await provider.aclose()

    assert finished.state is RunState.COMPLETED
    first, second = (request.json for request in server.requests)
    assert first["max_completion_tokens"] == second["max_completion_tokens"] == 32768
    assert second["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "Images from the read_file result call_Qx8mZ3vT1kR9yB2nL5pW7dFh:",
            },
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        ],
    }
    gpt_41 = lookup("openai/gpt-4.1")
    usage = Usage(input_tokens=412 + 210, output_tokens=17 + 9, cache_read_tokens=1024)
    assert finished.cost_usd == pytest.approx(gpt_41.cost(usage))


# --- in-stream errors --------------------------------------------------------------------


async def test_a_transient_error_event_before_output_is_retried(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("error_server")), Reply(body=fixture("text")))
    deltas = await collect(make())

    assert len(server.requests) == 2
    assert deltas[0] == TextPart("Hello")


async def test_an_error_event_after_text_keeps_the_text_and_is_not_retried(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("error_after_text")), Reply(body=fixture("text")))
    deltas, error = await collect_until_error(make(provider="openrouter"))

    assert deltas == [TextPart("Let me")]
    assert error.message == "Provider returned error"
    assert error.retryable  # the loop may ask again; this turn keeps what arrived
    assert error.details == {"code": 502, "type": None}
    assert len(server.requests) == 1


async def test_a_context_length_error_event_is_not_retryable(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("error_context_length")))
    _, error = await collect_until_error(make())

    assert "maximum context length is 128000 tokens" in error.message
    assert not error.retryable
    assert len(server.requests) == 1


# --- transport faults --------------------------------------------------------------------


async def test_429_honours_retry_after_then_succeeds(
    server: ModelServer, make: MakeProvider
) -> None:
    limited = (
        b'{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests",'
        b'"code":"rate_limit_exceeded"}}'
    )
    server.reply(
        Reply(429, limited, headers={"retry-after": "0.01"}, content_type="application/json"),
        Reply(body=fixture("text")),
    )
    deltas = await collect(make())

    assert len(server.requests) == 2
    assert deltas[-1] == Finish("stop")


async def test_500_then_success(server: ModelServer, make: MakeProvider) -> None:
    server.reply(
        Reply(500, b'{"error":{"message":"boom","type":"server_error"}}'),
        Reply(body=fixture("text")),
    )
    deltas = await collect(make())

    assert len(server.requests) == 2
    assert deltas[0] == TextPart("Hello")


async def test_reset_before_the_first_byte_is_retried(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(fault="reset_before"), Reply(body=fixture("text")))
    deltas = await collect(make())

    assert len(server.requests) == 2
    assert deltas[0] == TextPart("Hello")


async def test_reset_after_output_delivers_the_text_then_fails(
    server: ModelServer, make: MakeProvider
) -> None:
    body = fixture("text")
    after_hello = body.index(b"\n\n", body.index(b'"Hello"')) + 2
    server.reply(
        Reply(body=body, fault="reset_after", fault_at=after_hello, chunk_size=after_hello),
        Reply(body=body),
    )
    deltas, error = await collect_until_error(make())

    assert deltas == [TextPart("Hello")]
    assert error.retryable
    assert len(server.requests) == 1


async def test_a_stream_without_done_or_finish_reason_is_truncated(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("truncated")))
    deltas, error = await collect_until_error(make())

    assert deltas == [TextPart("The answer is")]
    assert "ended before [DONE]" in error.message
    assert error.retryable
    assert len(server.requests) == 1  # output had arrived: not asked again


async def test_a_stream_cut_mid_event_before_output_is_retried(
    server: ModelServer, make: MakeProvider
) -> None:
    body = fixture("text")
    server.reply(Reply(body=body, fault="truncate", fault_at=100), Reply(body=body))
    deltas = await collect(make())

    assert len(server.requests) == 2
    assert deltas[0] == TextPart("Hello")


async def test_malformed_json_is_a_retryable_fault(server: ModelServer, make: MakeProvider) -> None:
    server.reply(Reply(body=fixture("malformed")), Reply(body=fixture("text")))
    deltas = await collect(make())

    assert len(server.requests) == 2
    assert deltas[0] == TextPart("Hello")


async def test_a_server_slower_than_the_read_timeout(
    server: ModelServer, make: MakeProvider
) -> None:
    server.reply(Reply(body=fixture("text"), fault="slow", delay=1))
    provider = make(read_timeout=0.2, retry=RetryPolicy(attempts=1))
    _, error = await collect_until_error(provider)

    assert "read timeout" in error.message
    assert error.retryable


@pytest.mark.parametrize("status", [400, 401])
async def test_client_errors_are_never_retried_and_never_show_the_key(
    server: ModelServer, make: MakeProvider, status: int
) -> None:
    echoed = (
        b'{"error":{"message":"Incorrect API key provided: '
        + KEY.encode()
        + b'. You can find your API key at https://platform.openai.com/account/api-keys.",'
        b'"type":"invalid_request_error","param":null,"code":"invalid_api_key"}}'
    )
    server.reply(Reply(status, echoed, content_type="application/json"), Reply(body=b""))
    _, error = await collect_until_error(make())

    assert error.status == status
    assert not error.retryable
    assert "Incorrect API key provided" in error.message
    assert KEY not in str(error)
    assert KEY[: len(KEY) // 2] not in str(error)
    assert len(server.requests) == 1
