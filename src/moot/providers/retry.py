"""Retries around one model turn: again after transient faults, never after output arrived.

A turn that failed before any text, thinking or tool call was streamed is safe to ask again.
Once output has reached the loop, a fault ends the turn (the loop keeps what arrived and stops
with provider_error), because asking again would show the person a second, different answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from moot.providers.base import Delta, ProviderError, TextPart, ThinkingPart, ToolCallStart
from moot.providers.config import RetryPolicy

_OUTPUT = (TextPart, ThinkingPart, ToolCallStart)

Sleep = Callable[[float], Awaitable[None]]


async def with_retries(
    attempt: Callable[[], AsyncIterator[Delta]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = asyncio.sleep,
) -> AsyncIterator[Delta]:
    """Yield the deltas of `attempt()`, trying again after retryable faults before output."""
    for number in range(1, policy.attempts + 1):
        produced = False
        try:
            async for delta in attempt():
                produced = produced or isinstance(delta, _OUTPUT)
                yield delta
            return
        except ProviderError as error:
            if produced or not error.retryable or number == policy.attempts:
                if number > 1:
                    error.message += f" (after {number} tries)"
                raise
            await sleep(policy.delay(number, error.retry_after))
