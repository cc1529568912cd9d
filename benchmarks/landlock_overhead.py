"""What Landlock adds to a shell command: `true` on the host vs under Landlock.

Both run through `Sandbox.run` as the `bash` tool calls it: `bash -c true` in a fresh
workspace, output captured, environment scrubbed, the process group killed at the end, taking
turns, medians of 50 runs after a few warm-up runs. The difference is what the Landlock
backend does per command: working out its rules (the private paths, the homes, the split
directories listed), reusing the last ruleset when they are the same, and the start through
the sandbox's zygote (a request over a socket, its fork, the child's entry into the sandbox:
capabilities, `no_new_privs`, the ruleset, the seccomp filter; the end reported back). The
rows below split that: the rules alone, a fresh ruleset (what a command pays when its rules
changed), and what moot would pay to fork itself instead (`/bin/true` through `subprocess`
with a `preexec_fn` that does nothing, against without). A second Landlock sandbox runs in a
workspace of 2,000 files under deny rules, as `sandbox_overhead` does for bubblewrap. The
machine's load weighs on this figure more than on bubblewrap's: a start is several processes'
turns (moot and the thread that works the rules out, the zygote, the command), each waiting
for a CPU. So the CPU time a command costs, all processes' (moot's, and
the zygote's with the commands it forked; the host's commands are moot's children), is
measured too, in a pass of its own per backend: the load moves it much less.
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from moot.permissions.masks import RACY_NS, mask_source
from moot.permissions.rules import RuleSet
from moot.sandbox.base import Sandbox, SandboxPolicy
from moot.sandbox.host import HostSandbox
from moot.sandbox.landlock import LandlockSandbox, landlock_unavailable
from report import Row, ms
from sandbox_overhead import _DENY, _populate, _time_runs
from timing import median

NAME = "landlock"
TARGET = "landlock - host <= 5 ms"


def _time(call: Callable[[], object], runs: int) -> float:
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return median(seconds)


def _cpu_seconds(sandbox: Sandbox) -> float:
    """The CPU time moot and the sandbox's processes have used so far: moot's own, its
    reaped children's (the host's commands), and the Landlock zygote's with its reaped
    children (the Landlock commands), read from /proc while it runs."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    zygote = getattr(getattr(sandbox, "_zygote", None), "_process", None)
    if zygote is not None:
        with open(f"/proc/{zygote.pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        total += sum(int(ticks) for ticks in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


async def _cpu_per_command(sandbox: Sandbox, workspace: Path, runs: int) -> float:
    """CPU seconds per `true` through `sandbox`, over `runs` commands after a warm-up."""

    async def run() -> None:
        result = await sandbox.run("true", cwd=workspace, env={"PATH": "/usr/bin:/bin"}, timeout=30)
        assert result.exit_code == 0, result.stderr

    try:
        for _ in range(5):
            await run()
        start = _cpu_seconds(sandbox)
        for _ in range(runs):
            await run()
        return (_cpu_seconds(sandbox) - start) / runs
    finally:
        await sandbox.close()


def _spawn(preexec: Callable[[], None] | None) -> None:
    subprocess.run(
        ["/bin/true"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        start_new_session=True,
        preexec_fn=preexec,
        check=True,
    )


def run(*, quick: bool) -> list[Row]:
    """Time `true` through the host and the Landlock backends."""
    runs = 20 if quick else 50
    why_not = landlock_unavailable()
    if why_not is not None:
        return [Row("`true` via Sandbox.run, landlock", f"not measured: {why_not}", TARGET)]
    with tempfile.TemporaryDirectory(prefix="moot-bench-landlock-") as scratch:
        workspace = Path(scratch).resolve() / "empty"
        workspace.mkdir()
        denied = Path(scratch).resolve() / "denied"
        _populate(denied, 2_000)
        time.sleep(RACY_NS / 1e9)  # until the new directories' listings may be kept
        policy = SandboxPolicy(workspace)
        landlock = LandlockSandbox(policy)
        masks = mask_source(RuleSet(deny=list(_DENY)), denied)
        sandboxes: dict[str, tuple[Sandbox, Path]] = {
            "host": (HostSandbox(policy), workspace),
            "landlock": (landlock, workspace),
            "landlock, deny rules": (LandlockSandbox(SandboxPolicy(denied, masks=masks)), denied),
        }
        rules = _time(landlock.rules, runs)
        made = landlock.rules()
        ruleset = _time(lambda: os.close(landlock.make_ruleset(made)), runs)
        count = len(made)
        walls = asyncio.run(_time_runs(sandboxes, runs))
        cpu = {
            label: asyncio.run(_cpu_per_command(make(policy), workspace, runs * 4))
            for label, make in (("host", HostSandbox), ("landlock", LandlockSandbox))
        }
        plain = _time(lambda: _spawn(None), runs)
        forked = _time(lambda: _spawn(lambda: None), runs)
    host, sandboxed = median(walls["host"]), median(walls["landlock"])
    overhead = sandboxed - host
    return [
        Row(f"`true` via Sandbox.run, host (median of {runs})", ms(host)),
        Row(f"`true` via Sandbox.run, landlock (median of {runs})", ms(sandboxed)),
        # Not judged (`Row.missed`): a difference of wall times, which the machine's load moves.
        Row("landlock overhead per command (difference)", ms(overhead), TARGET),
        Row(
            "landlock CPU time per command, all processes: host / landlock / difference",
            " / ".join(
                ms(x) for x in (cpu["host"], cpu["landlock"], cpu["landlock"] - cpu["host"])
            ),
        ),
        Row(
            "  with deny rules over 2,000 files (masks worked out per command)",
            ms(median(walls["landlock, deny rules"]) - host),
        ),
        Row(f"  its rules worked out ({count} rules)", ms(rules)),
        Row("  a fresh ruleset of them (when they changed)", ms(ruleset)),
        Row("  (moot forking itself instead: preexec_fn fork - vfork)", ms(forked - plain)),
    ]


def main() -> int:
    """Print the table for this benchmark alone."""
    from report import table

    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
