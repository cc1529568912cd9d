"""How to reach a model: endpoint, credentials, timeouts and retry policy."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import msgspec

from moot.providers.catalog import CatalogEntry, ModelInfo, lookup


class RetryPolicy(msgspec.Struct, frozen=True):
    """Exponential backoff with jitter for transient faults."""

    attempts: int = 4
    """Tries in all, the first included."""
    base_delay: float = 0.5
    max_delay: float = 30.0
    statuses: frozenset[int] = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
    """HTTP statuses worth another try; 400/401/403/404 never are."""

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before try `attempt + 1` (attempt counts from 1)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        backoff = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        return backoff * (0.5 + random.random() / 2)  # "equal jitter": never less than half


class ProviderConfig(msgspec.Struct, frozen=True):
    """Everything an adapter needs to talk to one model."""

    provider: str
    """The provider's name as in `provider/model` (`anthropic`, `openai`, `ollama`, ...)."""
    model: str
    """The model's id on that provider's API."""
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = {}
    """Extra headers every request carries."""
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    """Longest silence between two chunks of a streamed answer."""
    retry: RetryPolicy = msgspec.field(default_factory=RetryPolicy)
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    """For models with adjustable reasoning: "low", "medium", "high"."""
    catalog: Mapping[str, CatalogEntry] = {}
    """Catalog entries from the settings' `models`, over the built-in and user catalogs."""

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def info(self) -> ModelInfo:
        """What the catalog knows about this model (window, output cap, prices, abilities)."""
        return lookup(self.name, self.catalog)

    def __repr__(self) -> str:  # never show the key, even in a traceback
        return f"ProviderConfig({self.name!r}, base_url={self.base_url!r})"

    def __rich_repr__(self) -> Iterator[Any]:  # type: ignore[override]  # rich takes either
        # Struct's own `__rich_repr__` would list every field, the key too (rich prefers it).
        yield self.name
        yield "base_url", self.base_url
