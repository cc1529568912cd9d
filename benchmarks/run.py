"""Run moot's benchmarks and print one table: what | measured | target.

Benchmarks are not tests: most numbers are printed for people to read. A row whose benchmark
judges it against its target (`Row.missed`: a ratio of two figures taken in the same rounds,
such as a turn's growth with the session) fails the run: it is listed as FAIL under the table
and the exit status is 1. `scripts/bench` runs this with the project's venv; `--quick`
shrinks every size for a smoke run, `--only NAME` runs some of them.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sqlite3
import sys
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime

import agent_speed
import app_speed
import attachments_speed
import big_repo_speed
import compaction
import docker_overhead
import grep_speed
import import_time
import landlock_overhead
import loop_overhead
import lsp_speed
import mcp_speed
import peers_speed
import provider_speed
import proxy_overhead
import repl_speed
import repo_map_speed
import resume_time
import sandbox_overhead
import session_scale
import skills_load
import start_instructions
import start_speed
import startup_time
import store_append
import tool_overhead
import tool_schemas
from report import Row, failures, table

BENCHMARKS = {
    m.NAME: m
    for m in (
        startup_time,
        import_time,
        start_speed,
        repl_speed,
        start_instructions,
        store_append,
        loop_overhead,
        peers_speed,
        resume_time,
        compaction,
        session_scale,
        provider_speed,
        agent_speed,
        tool_overhead,
        lsp_speed,
        repo_map_speed,
        tool_schemas,
        skills_load,
        grep_speed,
        big_repo_speed,
        sandbox_overhead,
        landlock_overhead,
        docker_overhead,
        proxy_overhead,
        mcp_speed,
        app_speed,
        attachments_speed,
    )
}


def machine() -> str:
    """One line on where the numbers came from."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpu = _cpu_model()
    return (
        f"machine: {os.cpu_count()} CPUs ({usable} usable){f', {cpu}' if cpu else ''}; "
        f"Python {platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()} {platform.machine()}); SQLite {sqlite3.sqlite_version}; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shrink every size for a smoke run")
    parser.add_argument(
        "--only",
        action="append",
        choices=list(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    args = parser.parse_args(argv)
    rows: list[Row] = []
    started = time.perf_counter()
    for name in args.only or BENCHMARKS:
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        began = time.perf_counter()
        try:
            rows += BENCHMARKS[name].run(quick=args.quick)
        except Exception as exc:  # one broken benchmark must not lose the others' rows
            traceback.print_exc()
            rows.append(
                Row(
                    f"{name}: the benchmark failed",
                    f"{type(exc).__name__}: {exc}"[:120],
                    missed=True,
                )
            )
        # Free what one benchmark built so the collector does not walk it during the next.
        gc.collect()
        print(f"bench: {name} took {time.perf_counter() - began:.1f} s", file=sys.stderr)
    print(table(rows))
    print()
    print(machine())
    quick = " (--quick: sizes shrunk, for a smoke run only)" if args.quick else ""
    print(f"suite wall time: {time.perf_counter() - started:.1f} s{quick}")
    missed = failures(rows)
    for line in missed:
        print(line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
