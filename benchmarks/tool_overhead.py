"""Per-call overhead of the `read` and `edit` tools on a small file.

A 200-line Python file in a fresh temporary workspace. Each `read` reads it whole (numbered
lines, ledger stamp); each `edit` re-reads it, checks it against the ledger, replaces one line
and writes it back atomically (temporary file, fsync, rename). Timed through `invoke`, as the
runtime calls tools (argument validation and the hop to a worker thread included). The
temporary directory's file system decides the cost of the fsync: tmpfs makes it nearly free.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from moot.tools.base import ToolContext
from moot.tools.edit import edit_tool
from moot.tools.read import read_tool
from moot.workspace import Workspace
from report import Row, ms, table
from timing import median, percentile

NAME = "tools"
TARGET = "p50 <= 2 ms"
_CTX = ToolContext("bench", "run", "call", "bench", "tool")


def _small_file() -> str:
    return "".join(f"def function_{i}(x):\n    return x + {i}\n" for i in range(100))


async def _time_calls(calls: int, workdir: Path) -> dict[str, list[float]]:
    (workdir / "small.py").write_text(_small_file())
    ws = Workspace(workdir)
    read, edit = read_tool(ws), edit_tool(ws)
    timings: dict[str, list[float]] = {"read": [], "edit": []}
    for i in range(calls):
        started = time.perf_counter()
        result = await read.invoke({"path": "small.py"}, _CTX)
        timings["read"].append(time.perf_counter() - started)
        assert not result.is_error, result.content
        old, new = ("x + 7\n", "x + 7  # edited\n")
        if i % 2:
            old, new = new, old
        started = time.perf_counter()
        result = await edit.invoke({"path": "small.py", "old": old, "new": new}, _CTX)
        timings["edit"].append(time.perf_counter() - started)
        assert not result.is_error, result.content
    return timings


def run(*, quick: bool) -> list[Row]:
    """Time `read` and `edit` calls; a few warm-up calls are left out."""
    calls = 50 if quick else 500
    with tempfile.TemporaryDirectory(prefix="moot-bench-tools-") as scratch:
        timings = asyncio.run(_time_calls(calls + 10, Path(scratch)))
    rows = []
    for name, values in timings.items():
        kept = values[10:]
        measured = f"p50 {ms(median(kept))}, p95 {ms(percentile(kept, 95))}"
        rows.append(Row(f"{name} tool, 200-line file (invoke)", measured, TARGET))
    return rows


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
