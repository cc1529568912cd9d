"""Compaction of a 150k-token context with the scripted provider.

A conversation of one prompt and ~300 tool steps (each result ~2,000 characters) weighs about
150,000 tokens (estimated as the pre-flight check does). The model's window is 160,000 tokens,
so at the default threshold (0.8: 128,000) the next request must be compacted first.
Measured: the summary path (`compact` with the scripted model's canned summary; model time is
nil, so this is moot's own work), the fallback path when summarising fails (the failed ask
included), and the fallback alone; each with the tokens the next request then holds against
the threshold. And end to end: a run that grows to that size in the loop, with every request
it sends checked against the threshold.
"""

from __future__ import annotations

import asyncio
import time

from moot.core.agent import Agent
from moot.core.compact import KEEP_SHARE, compact, fallback, tokens
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from moot.protocol.messages import UserMessage as User
from moot.providers.base import ModelRequest, estimate_tokens
from moot.providers.scripted import ScriptedProvider
from moot.store.memory import MemoryStore
from moot.tools.base import SideEffect, tool
from report import Row, ms
from timing import median

NAME = "compaction"
WINDOW = 160_000
TARGET = "next request under the threshold; fallback <= 200 ms"


def _context(steps: int) -> list[Message]:
    messages: list[Message] = [User(content="Refactor the parser module and keep the tests green.")]
    for i in range(steps):
        call = ToolCall(id=f"t{i}", name="read", arguments={"path": f"src/mod_{i}.py"})
        messages.append(AssistantMessage(content=f"Reading module {i}.", tool_calls=(call,)))
        body = f"# src/mod_{i}.py\n" + ("def f(x):\n    return x + 1\n" * 72)
        messages.append(ToolResultMessage(tool_call_id=f"t{i}", name="read", content=body))
    return messages


def _timed(work, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return median(times), result


@tool(side_effect=SideEffect.READ_ONLY)
def read(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + ("def f(x):\n    return x + 1\n" * 72)


class _Watched(ScriptedProvider):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.largest = 0

    async def stream(self, request: ModelRequest):  # type: ignore[override]
        if request.purpose == "turn":
            self.largest = max(self.largest, estimate_tokens(request))
        async for delta in super().stream(request):
            yield delta


async def _end_to_end(steps: int, window: int) -> tuple[int, int, float]:
    script: list[object] = [
        {"tool_calls": [{"name": "read", "arguments": {"path": f"src/m{i}.py"}}]}
        for i in range(steps)
    ]
    model = _Watched([*script, "done"], context_window=window)
    limits = Limits(max_turns=None, max_repeated_tool_calls=None, no_progress_window=None)
    options = RuntimeOptions(tools=[read], limits=limits)
    runtime = Runtime([Agent("main", model=model)], store=MemoryStore(), options=options)
    events = runtime.subscribe()
    started = time.perf_counter()
    runtime.submit(ops.UserTurn(text="read every module"))
    finished = await runtime.wait()
    wall = time.perf_counter() - started
    assert finished is not None and finished.output == "done", finished
    runtime.submit(ops.Shutdown())
    compactions = [e async for e in events if isinstance(e, ev.ContextCompacted)]
    return len(compactions), model.largest, wall


def run(*, quick: bool) -> list[Row]:
    steps, window = (30, 16_000) if quick else (300, WINDOW)
    threshold = int(window * 0.8)
    messages = _context(steps)
    before = tokens(messages)
    budget = threshold - 2_000  # the system prompt and tool schemas take the rest
    runs = 3 if quick else 7

    def summarised():
        provider = ScriptedProvider([], context_window=window)
        return asyncio.run(
            compact(messages, provider=provider, budget=budget,
                    keep_tokens=int(budget * KEEP_SHARE), window=window)
        )  # fmt: skip

    def failed_then_fallback():
        provider = ScriptedProvider([], context_window=window, summaries=[{"error": "down"}])
        return asyncio.run(
            compact(messages, provider=provider, budget=budget,
                    keep_tokens=int(budget * KEEP_SHARE), window=window)
        )  # fmt: skip

    model_s, plan = _timed(summarised, runs)
    fallback_s, fplan = _timed(failed_then_fallback, runs)
    alone_s, _ = _timed(lambda: fallback(messages, budget), runs)
    count, largest, wall = asyncio.run(_end_to_end(steps, window))
    return [
        Row(f"compaction: {before:,}-token context ({steps} tool steps), window {window:,}", ""),
        Row(
            "  summary path (scripted summary), median; tokens after / threshold",
            f"{ms(model_s)}; {plan.tokens_after:,} / {threshold:,} ({plan.method})",
            "under the threshold",
        ),
        Row(
            "  fallback path (summary failed, then fallback), median; tokens after",
            f"{ms(fallback_s)}; {fplan.tokens_after:,} ({fplan.method})",
            "<= 200 ms",
        ),
        Row("  fallback alone, median", ms(alone_s), "<= 200 ms"),
        Row(
            f"  end to end: {steps}-step run in the loop, compactions; largest request sent",
            f"{count}; {largest:,} tokens ({wall:.1f} s wall, in memory)",
            f"<= {threshold:,}",
        ),
    ]
