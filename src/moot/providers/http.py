"""One streamed HTTP request to a model API, with faults mapped to ProviderError.

A `ProviderError` from here names provider, model, HTTP status and the server's own message,
and says whether trying again may help. It never contains the API key.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any

import httpx

from moot.providers.base import Delta, ModelRequest, ProviderError
from moot.providers.catalog import ModelInfo
from moot.providers.config import ProviderConfig
from moot.providers.retry import with_retries
from moot.providers.sse import ServerSentEvent, SSEDecoder


def make_client(config: ProviderConfig) -> httpx.AsyncClient:
    timeout = httpx.Timeout(
        connect=config.connect_timeout,
        read=config.read_timeout,
        write=config.connect_timeout,
        pool=config.connect_timeout,
    )
    # Loading the CA bundle costs ~50 ms of start-up; a plain-http endpoint (a local server)
    # has no TLS to verify, so it skips that work.
    tls = config.base_url.startswith("https:")
    return httpx.AsyncClient(timeout=timeout, headers=config.headers, verify=tls)


def redact(text: str, config: ProviderConfig) -> str:
    """The text with the API key (and any long prefix of it) blanked out.

    The key is blanked as written and as error messages quote it: escaped (`\\n`, `\\t`,
    `\\xe9`, as in a `repr` of it or of its bytes), and with or without surrounding whitespace.
    """
    key = config.api_key
    if not key or len(key) < 8:
        return text
    forms = {form for raw in (key, key.strip()) for form in _quoted(raw) if len(form) >= 8}
    for form in sorted(forms, key=len, reverse=True):  # whole forms before their prefixes
        text = text.replace(form, "[redacted]")
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form[: len(form) // 2], "[redacted]")
    return text


def _quoted(key: str) -> tuple[str, ...]:
    """`key` and the escaped forms a message may quote it in (as text, as bytes)."""
    try:
        raw = key.encode("utf-8", "surrogateescape")  # the bytes an environment variable held
    except UnicodeEncodeError:
        raw = key.encode("utf-8", "backslashreplace")
    return (
        key,
        repr(key)[1:-1],
        key.encode("unicode_escape").decode("ascii"),
        repr(raw)[2:-1],
    )


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The server's requested wait: `retry-after-ms`, or `retry-after` in seconds or as a date."""
    if (ms := headers.get("retry-after-ms")) is not None:
        with contextlib.suppress(ValueError):
            return float(ms) / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, when.timestamp() - time.time()) if when else None


def server_message(body: bytes) -> str:
    """The error message a model API put in its body, whatever its shape."""
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text[:500] or "(empty body)"
    if isinstance(data, list) and data:  # Gemini wraps errors in a list when streaming
        data = data[0]
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or error.get("status")
            if message:
                return str(message)[:500]
        if isinstance(error, str):
            return error[:500]
    return text[:500]


def body_retry_delay(body: bytes) -> float | None:
    """Google APIs put the wait in the body: `error.details[].retryDelay` such as "2.5s"."""
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, list) and data:
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    for detail in error.get("details", ()) if isinstance(error, dict) else ():
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return float(delay[:-1])
            except ValueError:
                return None
    return None


def http_error(config: ProviderConfig, response: httpx.Response, body: bytes) -> ProviderError:
    status = response.status_code
    return ProviderError(
        redact(server_message(body), config),
        provider=config.provider,
        model=config.model,
        status=status,
        retryable=status in config.retry.statuses,
        retry_after=retry_after(response.headers) or body_retry_delay(body),
    )


def transport_error(config: ProviderConfig, message: str) -> ProviderError:
    return ProviderError(
        redact(message, config), provider=config.provider, model=config.model, retryable=True
    )


def request_error(config: ProviderConfig, message: str) -> ProviderError:
    """A request that cannot be sent as configured: another try would fail the same way."""
    return ProviderError(message, provider=config.provider, model=config.model, retryable=False)


_UNSENDABLE = (
    "cannot send the request: a header or the URL holds a character HTTP does not allow "
    "(check the API key and the base URL for stray characters)"
)
"""Fixed, because httpx's own message quotes the offending header: the key."""


async def post_sse(
    client: httpx.AsyncClient,
    config: ProviderConfig,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
) -> AsyncGenerator[ServerSentEvent, None]:
    """POST `body` as JSON and yield the server-sent events of the answer.

    Raises:
        ProviderError: an HTTP error status, a connection fault, a timeout, or a stream that
            ended in the middle of an event (all retryable but 4xx); or a request that cannot
            be built or sent as configured (never retryable, and never quoting the request).
    """
    content = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    request_headers = {"content-type": "application/json", "accept": "text/event-stream", **headers}
    try:
        request = client.build_request("POST", url, headers=request_headers, content=content)
    except (httpx.InvalidURL, ValueError, TypeError):  # UnicodeEncodeError is a ValueError
        raise request_error(config, _UNSENDABLE) from None
    try:
        reply = await client.send(request, stream=True)
        try:
            if reply.status_code >= 400:
                raise http_error(config, reply, await reply.aread())
            decoder = SSEDecoder()
            async for chunk in reply.aiter_bytes():
                for event in decoder.feed(chunk):
                    yield event
            for event in decoder.finish():
                yield event
            if decoder.pending:
                raise transport_error(config, "the stream ended in the middle of an event")
        finally:
            await reply.aclose()
    except httpx.ConnectTimeout:
        raise transport_error(
            config, f"could not connect within {config.connect_timeout:g}s"
        ) from None
    except httpx.ReadTimeout:
        raise transport_error(
            config, f"no data for {config.read_timeout:g}s (read timeout)"
        ) from None
    except httpx.UnsupportedProtocol:
        raise request_error(
            config, "cannot send the request: the base URL's scheme is not http:// or https://"
        ) from None
    except httpx.LocalProtocolError:  # h11 refused a header value (a key with a newline)
        raise request_error(config, _UNSENDABLE) from None
    except httpx.TransportError as exc:
        detail = str(exc) or type(exc).__name__
        raise transport_error(config, f"connection failed: {detail}") from None


def parse_data(config: ProviderConfig, event: ServerSentEvent) -> Any:
    """An event's JSON data; malformed JSON is a retryable fault of the stream."""
    try:
        return json.loads(event.data)
    except ValueError:
        raise transport_error(
            config, f"the server sent malformed JSON in a `{event.event}` event"
        ) from None


class HTTPAdapter(ABC):
    """What every HTTP adapter shares: its config, a client made on first use, retries.

    A subclass builds the request (`build_request`, pure) and reads one attempt's events
    (`_attempt`, reading `self._events(request)`); `stream` retries attempts that failed
    before any output.
    """

    def __init__(self, config: ProviderConfig, *, client: httpx.AsyncClient | None = None) -> None:
        self.config = config
        self.name = config.name
        self._client = client
        self._owns_client = client is None

    def model_info(self) -> ModelInfo:
        """The catalog's entry for this model (`DescribedModel`)."""
        return self.config.info

    @abstractmethod
    def build_request(self, request: ModelRequest) -> tuple[str, dict[str, str], dict[str, Any]]:
        """The URL, headers and JSON body of one streamed call (pure, so tests assert it)."""

    @abstractmethod
    def _attempt(self, request: ModelRequest) -> AsyncIterator[Delta]:
        """One try: read `self._events(request)` and yield the turn's deltas."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        """Yield the deltas of one model turn, retrying transient faults before any output.

        Raises:
            ProviderError: the call failed (HTTP status, transport fault, an error event).
        """
        async for delta in with_retries(lambda: self._attempt(request), self.config.retry):
            yield delta

    def _events(self, request: ModelRequest) -> AsyncGenerator[ServerSentEvent, None]:
        url, headers, body = self.build_request(request)
        if self._client is None:
            self._client = make_client(self.config)
        return post_sse(self._client, self.config, url, headers=headers, body=body)

    async def aclose(self) -> None:
        """Close the client this adapter made (one passed in stays open)."""
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None
