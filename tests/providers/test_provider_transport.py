"""The transport under every adapter: SSE decoding, HTTP faults, retries."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model_server import ModelServer, Reply
from moot.protocol.messages import Usage
from moot.providers.base import ProviderError, TextPart, UsageReport
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.http import (
    body_retry_delay,
    make_client,
    post_sse,
    retry_after,
    server_message,
)
from moot.providers.retry import with_retries
from moot.providers.sse import ServerSentEvent, SSEDecoder

STREAM = (
    b": keep-alive comment\r\n"
    b'event: message_start\r\ndata: {"a": 1}\r\n\r\n'
    b"data: line one\ndata: line two\n\n"
    b"id: 7\revent: ping\rdata: \xe2\x9c\x93\r\r"
)
EXPECTED = [
    ServerSentEvent("message_start", '{"a": 1}'),
    ServerSentEvent("message", "line one\nline two"),
    ServerSentEvent("ping", "✓", "7"),
]


def test_sse_decodes_every_line_ending_comments_and_multiline_data() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(STREAM) + decoder.finish() == EXPECTED
    assert not decoder.pending


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_sse_gives_the_same_events_however_the_bytes_are_split(cuts: list[int]) -> None:
    decoder = SSEDecoder()
    events = []
    bounds = [0, *sorted(cuts), len(STREAM)]
    for start, end in itertools.pairwise(bounds):
        events += decoder.feed(STREAM[start:end])
    assert events + decoder.finish() == EXPECTED


def test_sse_knows_a_stream_cut_off_mid_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"partial": tr') == []
    assert decoder.pending
    decoder = SSEDecoder()
    decoder.feed(b"data: complete\n")
    assert decoder.pending  # fields without the blank line that ends the event


def test_retry_after_in_seconds_milliseconds_and_dates() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert retry_after({}) is None


def test_a_google_quota_error_says_how_long_to_wait_in_its_body() -> None:
    body = (
        b'{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED", "details":'
        b' [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2.5s"}]}}'
    )
    assert body_retry_delay(body) == 2.5
    assert body_retry_delay(b"not json") is None


def test_server_messages_of_every_shape() -> None:
    assert server_message(b'{"type":"error","error":{"type":"x","message":"Overloaded"}}') == (
        "Overloaded"
    )
    assert server_message(b'[{"error": {"code": 429, "message": "quota", "status": "R"}}]') == (
        "quota"
    )
    assert server_message(b"<html>bad gateway</html>") == "<html>bad gateway</html>"
    assert server_message(b"") == "(empty body)"


def config(server: ModelServer, **kwargs) -> ProviderConfig:
    defaults = {"read_timeout": 5.0, "retry": RetryPolicy(base_delay=0.01)}
    return ProviderConfig(
        "test", "m-1", server.url, api_key="sk-secret-key-123456", **{**defaults, **kwargs}
    )


async def collect(cfg: ProviderConfig) -> list[ServerSentEvent]:
    async with make_client(cfg) as client:
        return [e async for e in post_sse(client, cfg, cfg.base_url + "/x", headers={}, body={})]


TRANSIENT = [408, 409, 429, 500, 502, 503, 504, 529]
PERMANENT = [400, 401, 403, 404]


@pytest.mark.parametrize("status", TRANSIENT + PERMANENT)
async def test_exactly_the_transient_statuses_are_retryable(status: int) -> None:
    with ModelServer() as server:
        server.reply(Reply(status, b'{"error":{"message":"said the server"}}'))
        with pytest.raises(ProviderError) as caught:
            await collect(config(server))
    error = caught.value
    assert (error.status, error.retryable) == (status, status in TRANSIENT)
    assert f"HTTP {status}" in str(error) and "said the server" in str(error)


def test_the_policy_retries_the_transient_statuses() -> None:
    assert RetryPolicy().statuses == frozenset(TRANSIENT)


async def test_post_sse_streams_events_and_sends_json() -> None:
    with ModelServer() as server:
        server.reply(Reply(body=STREAM, chunk_size=5))
        assert await collect(config(server)) == EXPECTED
        (request,) = server.requests
        assert request.json == {}
        assert request.headers["accept"] == "text/event-stream"


@pytest.mark.parametrize(
    ("reply", "retryable", "words"),
    [
        (Reply(429, b'{"error":{"message":"slow down"}}', {"retry-after": "2"}), True, "slow down"),
        (Reply(529, b'{"error":{"message":"Overloaded"}}'), True, "HTTP 529"),
        (Reply(400, b'{"error":{"message":"bad request"}}'), False, "bad request"),
        (Reply(401, b'{"error":{"message":"key sk-secret-key-123456 invalid"}}'), False, "401"),
        (Reply(fault="reset_before"), True, "connection failed"),
        (
            Reply(body=b"data: {}\n\ndata: {}\n\n", fault="truncate", fault_at=12),
            True,
            "connection",
        ),
        (Reply(body=b'data: {}\n\ndata: {"cut": 1}\n'), True, "ended in the middle of an event"),
        (Reply(body=b"data: {}\n\n", fault="slow", delay=2), True, "read timeout"),
    ],
)
async def test_faults_become_provider_errors(reply: Reply, retryable: bool, words: str) -> None:
    with ModelServer() as server:
        server.reply(reply)
        cfg = config(server, read_timeout=0.3)
        with pytest.raises(ProviderError) as caught:
            await collect(cfg)
    error = caught.value
    assert error.retryable is retryable
    assert words in str(error)
    assert "test/m-1" in str(error)
    assert "sk-secret" not in str(error)
    if reply.status == 429:
        assert error.retry_after == 2.0


def usage_turn(text: str):
    async def attempt():
        yield TextPart(text)
        yield UsageReport(Usage(output_tokens=1))

    return attempt


async def test_retries_before_output_then_succeeds() -> None:
    slept: list[float] = []
    attempts = iter(["fail", "fail", "ok"])

    def attempt():
        async def run():
            if next(attempts) == "fail":
                raise ProviderError("busy", retryable=True, retry_after=0.5)
            yield TextPart("hi")

        return run()

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    deltas = [d async for d in with_retries(attempt, RetryPolicy(attempts=4), sleep=sleep)]
    assert deltas == [TextPart("hi")]
    assert slept == [0.5, 0.5]  # the server's retry-after, not our backoff


async def test_no_retry_after_output_or_for_permanent_errors() -> None:
    calls = 0

    def broken_after_output():
        async def run():
            nonlocal calls
            calls += 1
            yield TextPart("partial")
            raise ProviderError("reset", retryable=True)

        return run()

    seen = []

    async def consume() -> None:
        async for delta in with_retries(broken_after_output, RetryPolicy(base_delay=0)):
            seen.append(delta)

    with pytest.raises(ProviderError):
        await consume()
    assert (calls, seen) == (1, [TextPart("partial")])

    def permanent():
        async def run():
            nonlocal calls
            calls += 1
            raise ProviderError("bad key", status=401, retryable=False)
            yield  # pragma: no cover

        return run()

    calls = 0
    with pytest.raises(ProviderError, match="bad key"):
        [d async for d in with_retries(permanent, RetryPolicy(base_delay=0))]
    assert calls == 1


async def test_gives_up_after_the_last_try_and_says_so() -> None:
    def always_busy():
        async def run():
            raise ProviderError("overloaded", retryable=True)
            yield  # pragma: no cover

        return run()

    async def no_sleep(seconds: float) -> None:
        pass

    with pytest.raises(ProviderError, match=r"overloaded \(after 3 tries\)"):
        [d async for d in with_retries(always_busy, RetryPolicy(attempts=3), sleep=no_sleep)]


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delay = policy.delay(attempt)
        assert ceiling / 2 <= delay <= ceiling
    assert policy.delay(1, retry_after=60) == 5.0
