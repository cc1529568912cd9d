"""A fallback router: an ordered list of models; when one fails, the next; failures cool down.

A model fails when its provider gave up (its own retries are spent) before any output arrived.
A failed model is skipped for `cooldown` seconds; when every model is cooling down, the one that
recovers first is tried anyway rather than failing outright.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence

from moot.providers.base import (
    Delta,
    ModelRequest,
    Provider,
    ProviderError,
    TextPart,
    ThinkingPart,
    ToolCallStart,
)

_OUTPUT = (TextPart, ThinkingPart, ToolCallStart)


class FallbackProvider:
    def __init__(
        self,
        providers: Sequence[Provider],
        *,
        cooldown: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not providers:
            raise ValueError("a fallback router needs at least one model")
        self.providers = list(providers)
        self.name = ",".join(p.name for p in providers)
        self.cooldown = cooldown
        self._clock = clock
        self._cooling: dict[int, float] = {}
        """Index of a failed provider -> the time it may be tried again."""

    def _order(self) -> list[int]:
        now = self._clock()
        ready = [i for i in range(len(self.providers)) if self._cooling.get(i, 0) <= now]
        cooling = sorted(set(range(len(self.providers))) - set(ready), key=self._cooling.get)
        return ready or cooling[:1]

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        failures: list[str] = []
        for index in self._order():
            provider = self.providers[index]
            produced = False
            try:
                async for delta in provider.stream(request):
                    produced = produced or isinstance(delta, _OUTPUT)
                    yield delta
                self._cooling.pop(index, None)
                return
            except ProviderError as error:
                if produced:
                    raise  # output reached the person: a second answer would contradict it
                self._cooling[index] = self._clock() + self.cooldown
                failures.append(str(error))
        raise ProviderError(
            "every model failed: " + "; ".join(failures), provider="router", retryable=True
        )
