"""The provider seam: a model request in, a stream of deltas out.

Deltas are plain frozen structs, not events: the runtime turns them into events (text and
thinking deltas) and assembles them into one `ModelResponded` per model turn.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import msgspec

from moot.protocol.messages import Message, Usage

if TYPE_CHECKING:
    from moot.protocol.events import Event
    from moot.providers.catalog import ModelInfo


class UnknownModel(ValueError):
    """No provider serves this model name, or it cannot be reached as configured (a key
    missing or malformed): a usage error."""


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as a model sees it."""

    name: str
    description: str
    parameters: Mapping[str, Any]


class ModelRequest(msgspec.Struct, frozen=True):
    """Everything one model call needs; providers map it to their wire format."""

    model: str
    system: str
    messages: Sequence[Message]
    """The conversation, read-only. The runtime hands a view of the call's own messages (no
    copy of a long conversation per request), which never changes: iterate or index it;
    `tuple(request.messages)` makes a value of your own (msgspec encodes that, not a view)."""
    tools: Sequence[ToolSpec] = ()
    agent: str = ""
    """The agent asking; scripted and function providers use it to pick their script."""
    max_output_tokens: int | None = None
    purpose: Literal["turn", "compact", "title"] = "turn"
    """compact: a request to summarise a conversation (scripted providers answer it from their
    `summaries`, not from the agent's turns); title: a request for a session's title (from
    their `titles`)."""


class TextPart(msgspec.Struct, frozen=True):
    text: str


class ThinkingPart(msgspec.Struct, frozen=True):
    text: str
    signature: str | None = None


class ToolCallStart(msgspec.Struct, frozen=True):
    index: int
    id: str
    name: str


class ToolCallArgs(msgspec.Struct, frozen=True):
    """A fragment of a tool call's JSON argument text."""

    index: int
    text: str


class UsageReport(msgspec.Struct, frozen=True):
    usage: Usage
    cost_usd: float | None = None
    """The provider's own price for the call, when it knows one."""

    def __post_init__(self) -> None:
        # A price below zero or not a number is no price: -1000 USD reported once (or NaN,
        # which no comparison trips on) would lift the session's cost limit for good.
        cost = self.cost_usd
        if isinstance(cost, int | float) and not (math.isfinite(cost) and cost >= 0):
            msgspec.structs.force_setattr(self, "cost_usd", None)


class Finish(msgspec.Struct, frozen=True):
    reason: str
    """The provider's reason for ending the turn, in its own words (`end_turn`, `length`, ...)."""


Delta = TextPart | ThinkingPart | ToolCallStart | ToolCallArgs | UsageReport | Finish


# A plain class: an Exception subclass cannot be a Struct, and a dataclass costs ~0.7 ms to
# create, on every front end's start-up.
class ProviderError(Exception):
    """A model call failed; the message names provider, model and the server's words.

    `retryable` says whether the fault may pass (an overload, a dropped connection), so that
    `with_retries` tries again. By the time this reaches the loop the provider has spent its
    tries, so the loop never asks again: the turn ends with stop reason `provider_error`.
    `retry_after`: seconds the server asked us to wait (`retry-after`, `retry-after-ms`).
    """

    def __init__(
        self,
        message: str,
        provider: str = "",
        model: str = "",
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.provider, self.model, self.status = message, provider, model, status
        self.retryable, self.retry_after = retryable, retry_after
        self.details: dict[str, Any] = {} if details is None else details

    def __repr__(self) -> str:
        return f"ProviderError({self.message!r}, provider={self.provider!r}, model={self.model!r})"

    def __str__(self) -> str:
        where = "/".join(p for p in (self.provider, self.model) if p)
        status = f" (HTTP {self.status})" if self.status else ""
        return f"{where}{status}: {self.message}" if where else self.message


@runtime_checkable
class Provider(Protocol):
    """A model endpoint. `stream` yields deltas for one model turn or raises ProviderError."""

    name: str
    """`provider/model` as people write it; shown in traces and recorded with usage."""

    def stream(self, request: ModelRequest) -> AsyncIterator[Delta]: ...


@runtime_checkable
class DescribedModel(Protocol):
    """A provider that says itself what its model accepts, where no one config tells.

    The fallback router answers for all of its models at once (`FallbackProvider.model_info`).
    """

    def model_info(self) -> ModelInfo | None:
        """The catalog's view of the model, or None when nothing bounds it."""
        ...


def model_info(provider: Provider) -> ModelInfo | None:
    """What the catalog knows of the model behind `provider`; None when nothing bounds it.

    The loop asks this before each request: a model that takes no images gets a note in their
    place, and a request bigger than the context window is never sent. A `DescribedModel` (an
    HTTP adapter, the fallback router) answers for itself; scripted and function providers
    take anything (None).
    """
    return provider.model_info() if isinstance(provider, DescribedModel) else None


async def ask_text(provider: Provider, request: ModelRequest) -> tuple[str, Usage, float]:
    """A request asked outside every run (a compaction summary, a title): the answer's whole
    text, its usage and its cost (0 where the provider reports none).

    Raises:
        ProviderError: the model failed.
    """
    parts: list[str] = []
    usage, cost = Usage(), 0.0
    async for delta in provider.stream(request):
        if isinstance(delta, TextPart):
            parts.append(delta.text)
        elif isinstance(delta, UsageReport):
            usage, cost = delta.usage, delta.cost_usd or 0.0
    return "".join(parts), usage, cost


@runtime_checkable
class ResumesFromLog(Protocol):
    """A provider whose next answer depends on the calls already made to it in this session
    (a script's position): told them once, when the runtime makes it, from the session's log.

    The runtime keeps no count for it: each model call is in the log as a `model_responded`
    or a provider `error`, both naming the model (`LOG_KINDS`).
    """

    def resume(self, log: Iterable[Event]) -> None: ...


LOG_KINDS = ("model_responded", "error")
"""The event kinds `ResumesFromLog.resume` is given."""


class WeighedMessages(Sequence[Message]):
    """A conversation that knows what `estimate_tokens` counts of it (`chars`, the sum of
    `message_chars` over its messages, kept as it grew): the pre-flight check of a request
    that carries one walks none of it, however long the session."""

    __slots__ = ()
    chars: int


def estimate_tokens(request: ModelRequest) -> int:
    """A cheap guess at a request's input tokens (about four characters a token).

    Only for pre-flight checks against a model's context window: token counts that are
    billed or limited come from the usage the APIs report.
    """
    chars = len(request.system)
    for spec in request.tools:
        chars += len(spec.name) + len(spec.description) + len(json.dumps(spec.parameters))
    messages = request.messages
    if isinstance(messages, WeighedMessages):
        chars += messages.chars
    else:
        chars += sum(message_chars(m) for m in messages)
    return chars // 4


def message_chars(message: Message) -> int:
    """The characters `estimate_tokens` counts for one message (compaction weighs with it)."""
    chars = len(message.content)
    for attachment in getattr(message, "attachments", ()):
        from moot.providers.images import attachment_tokens  # only with an image or a PDF

        chars += 4 * attachment_tokens(attachment)
    for call in getattr(message, "tool_calls", ()):
        chars += len(call.name) + len(call.raw_arguments or json.dumps(call.arguments))
    for block in getattr(message, "thinking", ()):
        chars += len(block.text)
    return chars


_OVERFLOW_WORDS = (
    "context length",
    "context window",
    "context_length_exceeded",
    "maximum context",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "exceeds the context",
)


def is_context_overflow(error: ProviderError) -> bool:
    """Whether the provider refused the request as too long for the model: compaction and one
    retry may help (the loop does both), where asking again as it was never would."""
    if error.status not in (None, 400, 413):
        return False
    text = f"{error.message} {error.details}".lower()
    return any(word in text for word in _OVERFLOW_WORDS)
