"""What bubblewrap adds to a shell command: `true` on the host vs in the sandbox.

Both run through `Sandbox.run` as the `bash` tool calls it: `bash -c true` in a fresh
workspace, output captured, environment scrubbed, the process group killed at the end. The
only difference is the `bwrap` wrapper (mounts, namespaces, the hidden paths) and the checks
that build its arguments. Medians of 50 runs each, taking turns, after a few warm-up runs.
The reference rows time the bare processes (`posix_spawn` and wait, no moot) for scale.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from moot.sandbox.base import Sandbox, SandboxPolicy
from moot.sandbox.bubblewrap import BubblewrapSandbox, bwrap_unavailable
from moot.sandbox.host import HostSandbox
from report import Row, ms, table
from timing import median, time_processes

NAME = "sandbox"
TARGET = "bubblewrap - host <= 10 ms"
_WARMUP = 5


async def _time_runs(
    sandboxes: dict[str, Sandbox], runs: int, workspace: Path
) -> dict[str, list[float]]:
    walls: dict[str, list[float]] = {label: [] for label in sandboxes}
    for round_number in range(_WARMUP + runs):
        for label, sandbox in sandboxes.items():
            result = await sandbox.run(
                "true", cwd=workspace, env={"PATH": "/usr/bin:/bin"}, timeout=30
            )
            assert result.exit_code == 0, result.stderr
            if round_number >= _WARMUP:
                walls[label].append(result.duration_ms / 1000)
    for sandbox in sandboxes.values():
        await sandbox.close()
    return walls


def run(*, quick: bool) -> list[Row]:
    """Time `true` through the host and the bubblewrap backends."""
    runs = 20 if quick else 50
    why_not = bwrap_unavailable()
    with tempfile.TemporaryDirectory(prefix="moot-bench-sandbox-") as scratch:
        workspace = Path(scratch).resolve()
        policy = SandboxPolicy(workspace)
        sandboxes: dict[str, Sandbox] = {"host": HostSandbox(policy)}
        if why_not is None:
            bwrap = BubblewrapSandbox(policy)
            sandboxes["bubblewrap"] = bwrap
            wrapped = asyncio.run(bwrap.launch("true", workspace)).argv[:-3]
            bare = {"host": ["/bin/true"], "bubblewrap": [*wrapped, "/bin/true"]}
        else:
            bare = {"host": ["/bin/true"]}
        processes = time_processes(bare, runs=runs)  # before the sandboxes close: bwrap's /tmp
        walls = asyncio.run(_time_runs(sandboxes, runs, workspace))
    rows = [Row(f"`true` via Sandbox.run, host (median of {runs})", ms(median(walls["host"])))]
    if why_not is not None:
        rows.append(Row("`true` via Sandbox.run, bubblewrap", f"not measured: {why_not}", TARGET))
        return rows
    host, sandboxed = median(walls["host"]), median(walls["bubblewrap"])
    rows += [
        Row(f"`true` via Sandbox.run, bubblewrap (median of {runs})", ms(sandboxed)),
        Row("bubblewrap overhead per command (difference)", ms(sandboxed - host), TARGET),
        Row("bare `/bin/true`, spawn to exit (reference)", ms(median(processes["host"].walls))),
        Row(
            "bare `bwrap ... /bin/true`, spawn to exit (reference)",
            ms(median(processes["bubblewrap"].walls)),
        ),
    ]
    return rows


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
