"""A fallback router: an ordered list of models; when one fails, the next; failures cool down.

A model fails when its provider gave up (its own retries are spent) before any output arrived.
A failed model is skipped for `cooldown` seconds; when every model is cooling down, the one that
recovers first is tried anyway rather than failing outright. When every model tried has failed,
the router gives up too, with all of their messages: the loop does not ask again.

Any of the models may answer a request, so the router describes what all of them accept
(`model_info`): the loop strips images unless every model takes them, and checks a request
against the smallest context window.
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
    model_info,
)
from moot.providers.catalog import ModelInfo

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

    def model_info(self) -> ModelInfo | None:
        """What every model of the router accepts (`DescribedModel`), so a request fits whichever
        answers: images only if each takes them, the smallest context window and output cap.

        Models without a catalog entry (scripted ones) bound nothing; None when no model has one.
        Prices stay unknown here: each model reports the cost of its own answers.
        """
        infos = [info for p in self.providers if (info := model_info(p)) is not None]
        if not infos:
            return None
        return ModelInfo(
            name=self.name,
            context_window=min(i.context_window for i in infos),
            max_output=min(i.max_output for i in infos),
            tools=all(i.tools for i in infos),
            images=all(i.images for i in infos),
            documents=all(i.documents for i in infos),
            thinking=all(i.thinking for i in infos),
            known=all(i.known for i in infos),
        )

    def _order(self) -> list[int]:
        now = self._clock()
        ready = [i for i in range(len(self.providers)) if self._cooling.get(i, 0) <= now]
        cooling = sorted(
            set(range(len(self.providers))) - set(ready), key=lambda i: self._cooling.get(i, 0)
        )
        return ready or cooling[:1]

    async def stream(self, request: ModelRequest) -> AsyncIterator[Delta]:
        failures: list[ProviderError] = []
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
                failures.append(error)
        raise ProviderError(
            "every model failed: " + "; ".join(str(e) for e in failures),
            provider="router",
            retryable=any(e.retryable for e in failures),
        )
