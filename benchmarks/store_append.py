"""3. Store append latency as one session's log grows from 1k to 100k events.

Each timed region builds the event object and appends it (`store.append`), as the runtime does
for every event: "append (construct + store)". The log is one run: a `turn_started`, then
`text_delta`s of 16 characters. Latencies are reported for the 1,000 appends that end at each
size, so "at 10k" means appends 9,001 to 10,000: the cost when the log holds about that many.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from moot.protocol.events import TextDelta, TurnStarted
from moot.store.base import Store
from moot.store.memory import MemoryStore
from moot.store.sqlite import SQLiteStore
from report import Row, ms
from timing import percentile

NAME = "store"
WINDOW = 1_000
RUN_ID = "run_bench"
TARGET = "p50 <= 0.3 ms"


def append_latencies(store: Store, total: int) -> list[float]:
    """Append `total` events to a new session; the seconds each append took, in order."""
    sid = store.create_session(title="bench").id
    clock = time.perf_counter_ns
    latencies = [0] * total
    started = clock()
    store.append(
        TurnStarted(
            session_id=sid,
            run_id=RUN_ID,
            agent="a",
            call_id=RUN_ID,
            parent_call_id=None,
            prompt="x",
        )
    )
    latencies[0] = clock() - started
    for i in range(1, total):
        started = clock()
        store.append(
            TextDelta(session_id=sid, run_id=RUN_ID, agent="a", call_id=RUN_ID, text="x" * 16)
        )
        latencies[i] = clock() - started
    return [ns / 1e9 for ns in latencies]


def _window(latencies: list[float], size: int) -> tuple[float, float]:
    """p50 and p99 of the appends numbered `size - WINDOW + 1` to `size`."""
    window = latencies[max(0, size - WINDOW) : size]
    return percentile(window, 50), percentile(window, 99)


def _label(size: int) -> str:
    return f"{size // 1000}k"


def run(*, quick: bool) -> list[Row]:
    sizes: Sequence[int] = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    rows = []
    with tempfile.TemporaryDirectory(prefix="moot-bench-") as tmp:
        store = SQLiteStore(Path(tmp) / "sessions.db")
        try:
            sqlite_latencies = append_latencies(store, sizes[-1])
        finally:
            store.close()
    p50s = []
    for size in sizes:
        p50, p99 = _window(sqlite_latencies, size)
        p50s.append(p50)
        rows.append(
            Row(
                f"SQLite append (construct + store), log at {_label(size)}: p50 / p99",
                f"{ms(p50)} / {ms(p99)}",
                TARGET,
            )
        )
    rows.append(
        Row(
            f"SQLite append p50 at {_label(sizes[-1])} / p50 at {_label(sizes[0])}",
            f"{p50s[-1] / p50s[0]:.2f}x",
            "flat (about 1x)",
        )
    )
    memory_latencies = append_latencies(MemoryStore(), sizes[-1])
    p50, p99 = _window(memory_latencies, sizes[-1])
    rows.append(
        Row(
            f"memory append (construct + store), log at {_label(sizes[-1])}: p50 / p99",
            f"{ms(p50)} / {ms(p99)}",
            "(reference)",
        )
    )
    return rows
