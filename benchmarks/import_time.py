"""2. `import moot` and its lazy public API: wall time of a process that does only that.

Reported as measured, interpreter start included; the `python -c pass` row of the startup
benchmark is the reference to hold these against.
"""

from __future__ import annotations

import sys

from report import Row, ms
from timing import median, percentile, time_processes

NAME = "import"


def run(*, quick: bool) -> list[Row]:
    commands = {
        "python -c 'import moot'": [sys.executable, "-c", "import moot"],
        "python -c 'import moot; moot.Agent'": [sys.executable, "-c", "import moot; moot.Agent"],
    }
    runs = 10 if quick else 30
    results = time_processes(commands, runs=runs)
    return [
        Row(
            f"{label}: wall p50 / p90 over {runs} runs",
            f"{ms(median(r.walls))} / {ms(percentile(r.walls, 90))}",
            "(compare: python -c pass)",
        )
        for label, r in results.items()
    ]
