"""The loop over real HTTP adapters and a local server: it honours what the provider layer
decides, the retries it spends and what the catalog says a model accepts."""

from __future__ import annotations

import json

import pytest

import wire_builders
from model_server import ModelServer, Reply, sse_fixture
from moot.core.agent import Agent
from moot.protocol import events as ev
from moot.protocol.messages import IMAGE_OMITTED, Attachment
from moot.protocol.states import RunState, StopReason
from moot.providers.anthropic import AnthropicProvider
from moot.providers.base import Provider
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.router import FallbackProvider
from moot.tools.base import SideEffect, tool
from runtime_helpers import kinds, make_runtime, of, run_turn

KEY = "sk-ant-api03-loop-test-Zx9vK2mQ7pL4nR8sT1wY6uE3oI5aS0dFgH2jK4lM6nP8"
VISION = "claude-haiku-4-5"
TEXT_ONLY = "no-such-model"
"""Not in the catalog: the conservative defaults take no images."""
OVERLOADED = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
PNG = Attachment(mime_type="image/png", data="iVBORw0KGgoAAAANSUhEUg==")
NOTE = IMAGE_OMITTED.format(count=1)


def anthropic(url: str, model: str = VISION, **changes: object) -> AnthropicProvider:
    changes.setdefault("retry", RetryPolicy(base_delay=0.001))  # four tries, no real waiting
    return AnthropicProvider(ProviderConfig("anthropic", model, url, api_key=KEY, **changes))  # type: ignore[arg-type]


async def one_turn(
    provider: Provider, text: str = "go", attachments: tuple[Attachment, ...] = ()
) -> tuple[ev.TurnFinished, list[ev.Event]]:
    return await run_turn(
        make_runtime(Agent("main", model=provider)), text, attachments=attachments
    )


# ---- a provider that gave up ends the turn --------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "changes", "message"),
    [
        pytest.param(
            Reply(529, OVERLOADED, content_type="application/json"),
            {},
            "anthropic/claude-haiku-4-5 (HTTP 529): Overloaded (after 4 tries)",
            id="529",
        ),
        pytest.param(
            Reply(fault="reset_before"),
            {},
            "anthropic/claude-haiku-4-5: connection failed",
            id="connection reset",
        ),
        pytest.param(
            Reply(fault="slow", delay=5),
            {"read_timeout": 0.05},
            "anthropic/claude-haiku-4-5: no data for 0.05s (read timeout) (after 4 tries)",
            id="slower than the read timeout",
        ),
    ],
)
async def test_a_fault_that_outlasts_the_providers_retries_ends_the_turn(
    server: ModelServer, fault: Reply, changes: dict[str, object], message: str
) -> None:
    server.reply(*[fault] * 20)  # the fault persists: every request would meet it
    finished, events = await one_turn(anthropic(server.url, **changes))

    assert len(server.requests) == 4  # the provider's own tries, and no more from the loop
    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.PROVIDER_ERROR)
    (error,) = of(events, ev.Error)
    assert error.message.startswith(message)
    assert error.retryable  # it may pass later; the person may ask again
    assert kinds(events, skip_states=True)[-2:] == ["error", "turn_finished"]
    assert not of(events, ev.LimitHit)
    assert all(KEY not in ev.event_to_json(e) for e in events)


async def test_a_permanent_error_is_sent_once(server: ModelServer) -> None:
    body = b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
    server.reply(*[Reply(401, body, content_type="application/json")] * 5)
    finished, events = await one_turn(anthropic(server.url))
    assert len(server.requests) == 1
    assert finished.stop_reason is StopReason.PROVIDER_ERROR
    (error,) = of(events, ev.Error)
    assert error.message == "anthropic/claude-haiku-4-5 (HTTP 401): invalid x-api-key"
    assert not error.retryable


async def test_the_router_tries_each_model_once_then_ends_the_turn(server: ModelServer) -> None:
    server.reply(*[Reply(529, OVERLOADED, content_type="application/json")] * 20)
    router = FallbackProvider([anthropic(server.url), anthropic(server.url, "claude-sonnet-4-5")])
    finished, events = await one_turn(router)
    assert len(server.requests) == 8  # four tries of each model
    assert finished.stop_reason is StopReason.PROVIDER_ERROR
    (error,) = of(events, ev.Error)
    assert error.message == (
        "router: every model failed: "
        "anthropic/claude-haiku-4-5 (HTTP 529): Overloaded (after 4 tries); "
        "anthropic/claude-sonnet-4-5 (HTTP 529): Overloaded (after 4 tries)"
    )


# ---- images reach only models that accept them ----------------------------------------------


@pytest.mark.parametrize(
    ("models", "sees_image"),
    [
        pytest.param([VISION], True, id="a model that takes images"),
        pytest.param([TEXT_ONLY], False, id="a text-only model"),
        pytest.param([VISION, "claude-sonnet-4-5"], True, id="a router whose models all take them"),
        # The first model answers, but the router sends images only when every model takes them.
        pytest.param([VISION, TEXT_ONLY], False, id="a router with a text-only model"),
    ],
)
async def test_an_image_reaches_only_models_that_accept_it(
    server: ModelServer, models: list[str], sees_image: bool
) -> None:
    server.reply(Reply(body=sse_fixture("anthropic", "text")))
    providers = [anthropic(server.url, model) for model in models]
    provider = providers[0] if len(providers) == 1 else FallbackProvider(providers)
    finished, _ = await one_turn(provider, "what is in the picture?", (PNG,))

    assert finished.state is RunState.COMPLETED
    (request,) = server.requests
    (prompt,) = request.json["messages"]
    blocks = [block["type"] for block in prompt["content"]]
    texts = [block["text"] for block in prompt["content"] if block["type"] == "text"]
    if sees_image:
        assert blocks == ["image", "text"]
        assert PNG.data in request.body.decode()
        assert NOTE not in texts[0]
    else:
        assert blocks == ["text"]
        assert PNG.data not in request.body.decode()
        assert texts[0].endswith(NOTE)


# ---- a context overflow the server reports ---------------------------------------------------

TOO_LONG = (
    b'{"type":"error","error":{"type":"invalid_request_error",'
    b'"message":"prompt is too long: 210000 tokens > 200000 maximum"}}'
)


async def test_a_prompt_too_long_from_the_server_compacts_and_asks_once_more(
    server: ModelServer,
) -> None:
    @tool(side_effect=SideEffect.READ_ONLY)
    def look(at: str) -> str:
        """Look."""
        return "seen " + at * 4_000

    looks = [Reply(body=wire_builders.anthropic(call=("look", {"at": at}), n=n))
             for n, at in enumerate("abcd", 1)]  # fmt: skip
    server.reply(
        *looks,
        Reply(400, TOO_LONG, content_type="application/json"),
        Reply(body=wire_builders.anthropic(text="## Task\nlook\n## Decisions\n-", n=5)),
        Reply(body=wire_builders.anthropic(text="done", n=6)),
    )
    runtime = make_runtime(Agent("main", model=anthropic(server.url)), tools=[look])
    finished, events = await run_turn(runtime)
    assert (finished.state, finished.output) == (RunState.COMPLETED, "done")
    (compacted,) = of(events, ev.ContextCompacted)
    assert (compacted.trigger, compacted.method) == ("overflow", "model")
    assert compacted.summary.startswith("## Task")
    requests = list(server.requests)
    assert len(requests) == 7  # a 400 is not retried by the provider; the loop asked once more
    assert "Summarise this conversation" in json.dumps(requests[5].json["messages"])
    assert json.dumps(compacted.summary)[1:-1] in json.dumps(requests[6].json["messages"])
    assert compacted.tokens_after <= compacted.tokens_before // 2
