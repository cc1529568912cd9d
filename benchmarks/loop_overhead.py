"""4. Agent loop overhead per step: one model turn plus its tool call, model time excluded.

The scripted model answers at once with a call to the read-only `echo` tool, 1,000 times, then
says "done". The wall time from `submit` to the run's end, minus the time spent inside the model
function itself, divided by the steps, is the runtime's own cost per step: about ten events
built, checked, stored, folded and published, the request assembled and the tool invoked. The
model sees a context that grows by two messages a step; that cost is the runtime's and stays in.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from echo_agent import LIMITS, agent, echo, echo_turn
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import ops
from moot.providers.base import ModelRequest
from moot.providers.scripted import TurnLike
from moot.store.base import Store
from moot.store.memory import MemoryStore
from moot.store.sqlite import SQLiteStore
from report import Row, ms
from timing import median

NAME = "loop"
TARGET = "mean <= 2 ms"


@dataclass
class StepClock:
    """The model: `echo(n=k)` at turn k up to `steps`, then "done"; times its own calls."""

    steps: int
    entered: list[int] = field(default_factory=list)
    """perf_counter_ns when each model call began."""
    spent: list[int] = field(default_factory=list)
    """Nanoseconds spent inside each model call."""

    def __call__(self, request: ModelRequest) -> TurnLike:
        start = time.perf_counter_ns()
        k = len(self.entered) + 1
        turn: TurnLike = echo_turn(k) if k <= self.steps else "done"
        self.entered.append(start)
        self.spent.append(time.perf_counter_ns() - start)
        return turn

    def step_overheads(self) -> list[float]:
        """Seconds from each model call to the next, less the model's own time."""
        return [
            (self.entered[i + 1] - self.entered[i] - self.spent[i]) / 1e9
            for i in range(len(self.entered) - 1)
        ]


@dataclass(frozen=True)
class LoopTiming:
    per_step: float
    """Seconds of runtime overhead per step, over the whole run."""
    early: float
    """Median overhead of the first tenth of the steps."""
    late: float
    """Median overhead of the last tenth of the steps."""


async def time_loop(store: Store, steps: int) -> LoopTiming:
    """Run `steps` tool steps and a final answer; raise unless the run completed as scripted."""
    model = StepClock(steps)
    options = RuntimeOptions(tools=[echo], limits=LIMITS)
    runtime = Runtime([agent(model)], store=store, options=options)
    started = time.perf_counter_ns()
    runtime.submit(ops.UserTurn(text="go"))
    finished = await runtime.wait()
    wall = time.perf_counter_ns() - started
    # A benchmark of a run that stopped early or failed measures nothing worth printing.
    if finished is None or finished.turns != steps + 1 or finished.state != "completed":
        got = "no run" if finished is None else f"{finished.state} after {finished.turns} turns"
        raise RuntimeError(f"the loop benchmark's run did not complete {steps + 1} turns: {got}")
    overheads = model.step_overheads()
    tenth = max(1, steps // 10)
    return LoopTiming(
        per_step=(wall - sum(model.spent)) / 1e9 / steps,
        early=median(overheads[:tenth]),
        late=median(overheads[-tenth:]),
    )


def run(*, quick: bool) -> list[Row]:
    steps = 100 if quick else 1_000
    tenth = max(1, steps // 10)
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        store = SQLiteStore(Path(tmp) / "sessions.db")
        try:
            timings = {"SQLite": asyncio.run(time_loop(store, steps))}
        finally:
            store.close()
    timings["memory"] = asyncio.run(time_loop(MemoryStore(), steps))
    rows = []
    for store_name, timing in timings.items():
        rows.append(
            Row(
                f"loop overhead per step, {store_name} store, {steps:,} steps: mean",
                ms(timing.per_step),
                TARGET,
            )
        )
        rows.append(
            Row(
                f"  same, median of steps 1-{tenth} / {steps - tenth + 1}-{steps}",
                f"{ms(timing.early)} / {ms(timing.late)}",
                "(context grows each step)",
            )
        )
    return rows
