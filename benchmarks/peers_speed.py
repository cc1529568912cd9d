"""Peers: 100 agents called in parallel, and the cost of one `call_agent` round trip.

Models answer at once (function providers) and time themselves, so what is left of the wall
time is the runtime's: events built, checked, stored, folded and published for every call, the
roster in every system prompt, the tagged results.

- fan-out: a lead calls 100 distinct peers in one turn (they run at once), then answers.
  Target: all results within 1 s of runtime overhead.
- round trip: a lead calls one helper, one call per turn, 200 times; each round trip is the
  lead's step plus the helper's whole call. Reported per round trip, and against a plain
  tool step of the same loop (`loop`'s echo) so the peer call's own extra cost shows.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from echo_agent import LIMITS, echo, echo_turn
from moot import Agent, Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import ops
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider, TurnLike
from moot.store.base import Store
from moot.store.memory import MemoryStore
from moot.store.sqlite import SQLiteStore
from report import Row, ms

NAME = "peers"


class Clock:
    """Wraps a model function and adds up the time spent inside it."""

    def __init__(self) -> None:
        self.spent = 0

    def timed(self, model: Callable[[ModelRequest], TurnLike]) -> FunctionProvider:
        def run(request: ModelRequest) -> TurnLike:
            start = time.perf_counter_ns()
            try:
                return model(request)
            finally:
                self.spent += time.perf_counter_ns() - start

        return FunctionProvider(run)


async def overhead(agents: list[Agent], clock: Clock, store: Store, tools=()) -> float:
    """Seconds of runtime overhead of one turn to the first agent (model time excluded)."""
    limits = Limits(**{**LIMITS.as_dict(), "max_call_depth": 2})  # type: ignore[arg-type]
    runtime = Runtime(agents, store=store, options=RuntimeOptions(tools=tools, limits=limits))
    started = time.perf_counter_ns()
    runtime.submit(ops.UserTurn(text="go"))
    finished = await runtime.wait()
    wall = time.perf_counter_ns() - started
    runtime.submit(ops.Shutdown())
    if finished is None or finished.state != "completed":
        raise RuntimeError(f"the peers benchmark's run did not complete: {finished}")
    return (wall - clock.spent) / 1e9


def fan_out(store: Store, peers: int) -> float:
    clock = Clock()

    def lead(request: ModelRequest) -> TurnLike:
        if len(request.messages) > 1:
            return "all answered"
        calls = [
            {"name": "call_agent", "arguments": {"agent_name": f"p{i}", "message": "go"}}
            for i in range(peers)
        ]
        return {"tool_calls": calls}

    def peer(request: ModelRequest) -> TurnLike:
        return f"{request.agent} done"

    roster = [Agent("lead", model=clock.timed(lead))]
    shared = clock.timed(peer)
    roster += [Agent(f"p{i}", role="answers", model=shared) for i in range(peers)]
    return asyncio.run(overhead(roster, clock, store))


def round_trips(store: Store, trips: int, *, peer: bool) -> float:
    """Seconds per step of `trips` steps that each call the helper (or, without `peer`, echo)."""
    clock = Clock()

    def lead(request: ModelRequest) -> TurnLike:
        k = (len(request.messages) + 1) // 2
        if k > trips:
            return "done"
        if not peer:
            return echo_turn(k)
        call = {"agent_name": "helper", "message": f"trip {k}"}
        return {"tool_calls": [{"name": "call_agent", "arguments": call}]}

    agents = [
        Agent("lead", model=clock.timed(lead)),
        Agent("helper", model=clock.timed(lambda r: "back")),
    ]
    return asyncio.run(overhead(agents, clock, store, tools=[echo])) / trips


def run(*, quick: bool) -> list[Row]:
    peers, trips = (20, 10) if quick else (100, 50)
    rows = []
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        for name in ("SQLite", "memory"):
            store: Store = (
                SQLiteStore(Path(tmp) / "peers.db") if name == "SQLite" else MemoryStore()
            )
            try:
                fan = fan_out(store, peers)
                trip = round_trips(store, trips, peer=True)
                plain = round_trips(store, trips, peer=False)
            finally:
                if isinstance(store, SQLiteStore):
                    store.close()
            rows += [
                Row(f"{peers} peers called in parallel, {name} store: overhead", ms(fan), "<= 1 s"),
                Row(
                    f"one call_agent round trip, {name} store ({trips} trips): mean",
                    ms(trip),
                    "<= 5 ms",
                ),
                Row(f"  same, beyond a plain tool step ({ms(plain)})", ms(trip - plain), ""),
            ]
    return rows
