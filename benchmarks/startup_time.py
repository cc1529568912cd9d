"""1. `moot --version`: wall time and peak RSS of the whole process, against a bare interpreter."""

from __future__ import annotations

import subprocess
import sys

from report import Row, mib, ms
from timing import VENV_BIN, median, percentile, time_processes

NAME = "startup"
TARGET_WALL = "p50 <= 60 ms"


def run(*, quick: bool) -> list[Row]:
    moot = str(VENV_BIN / "moot")
    # Check once, outside the timed runs, that the fast path really answers.
    done = subprocess.run([moot, "--version"], capture_output=True, text=True, check=True)
    if not done.stdout.startswith("moot "):
        raise RuntimeError(f"moot --version printed {done.stdout!r}")
    commands = {
        "python -S -c pass (interpreter, no site)": [sys.executable, "-S", "-c", "pass"],
        "python -c pass (interpreter start)": [sys.executable, "-c", "pass"],
        "moot --version": [moot, "--version"],
    }
    runs = 10 if quick else 30
    results = time_processes(commands, runs=runs, rss=True)
    rows = []
    for label, measured in results.items():
        is_moot = label == "moot --version"
        walls = measured.walls
        rows.append(
            Row(
                f"{label}: wall p50 / p90 over {runs} runs",
                f"{ms(median(walls))} / {ms(percentile(walls, 90))}",
                TARGET_WALL if is_moot else "(reference)",
            )
        )
        peaks = measured.peak_rss_kib
        rows.append(
            Row(
                f"{label}: peak RSS (GNU time), median (max) of {len(peaks)} runs",
                f"{mib(median(peaks))} ({mib(max(peaks))})" if peaks else "n/a: no /usr/bin/time",
                "" if is_moot else "(reference)",
            )
        )
    return rows
