"""Percentiles, and timing whole processes: wall time, and peak RSS of that process alone."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

VENV_BIN = Path(sys.executable).parent
"""The venv's bin directory: `scripts/bench` runs this suite with `.venv/bin/python`."""

GNU_TIME = shutil.which("time", path="/usr/bin:/bin")
"""GNU time, which reports a child's peak RSS with `-f %M` (KiB); None when not installed."""


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) the live threads of process `pid` have used so far, in
    seconds: the scheduler's own count, in nanoseconds, of each (`/proc/PID/task/*/schedstat`;
    a thread that ended is not counted, 0 where /proc has none). Read at the moment a mark
    shows, it says what a start-up cost on a machine whose load moves the wall times."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that just ended
            continue
    return total / 1e9


def child_env() -> dict[str, str]:
    """The environment timed commands run in: this one, with Python's bytecode cache on.

    With `PYTHONDONTWRITEBYTECODE` set (some shells and CI images set it), every run would
    compile moot's modules from source again (~75 ms of `moot -p`). An installed moot has its
    `.pyc` files, so its start-up is measured with them: the warm-up rounds write them.
    """
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), interpolated between the closest ranks."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def wall_time(argv: Sequence[str]) -> float:
    """Seconds from spawning a command to its exit, its output discarded.

    Raises:
        RuntimeError: The command exited with a non-zero status.
    """
    devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0) for fd in (1, 2)]
    started = time.perf_counter()
    pid = os.posix_spawn(argv[0], list(argv), child_env(), file_actions=devnull)
    _, status = os.waitpid(pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {code}")
    return wall


def peak_rss_kib(argv: Sequence[str]) -> int | None:
    """The command's own peak resident set size in KiB, measured by GNU time; None without it.

    Not `os.wait4` or `getrusage(RUSAGE_CHILDREN)` here: Linux carries the high-water RSS of the
    address space a process had before `exec` into its `ru_maxrss`, and a child of this
    benchmark process starts as a copy of it (tens of MiB with pydantic and moot loaded), so
    every figure would read as this process's size. GNU time is a small C program; the child it
    forks starts from its few hundred KiB, so the figure it reports is the command's own.
    (`RUSAGE_CHILDREN` is also a maximum over all children, not a sum, so deltas of it do not
    give one child's figure either.)

    Raises:
        RuntimeError: The command exited with a non-zero status.
    """
    if GNU_TIME is None:
        return None
    done = subprocess.run(
        [GNU_TIME, "-f", "%M", *argv],
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {done.returncode}: {done.stderr}")
    return int(done.stderr.split()[-1])


@dataclass
class ProcessRuns:
    """Measurements of repeated runs of one command."""

    walls: list[float] = field(default_factory=list)
    """Seconds from spawn to exit."""
    peak_rss_kib: list[int] = field(default_factory=list)
    """Peak RSS of separate runs under GNU time (empty when it is not installed)."""


def time_processes(
    commands: Mapping[str, Sequence[str]], *, runs: int, rss: bool = False, warmup: int = 2
) -> dict[str, ProcessRuns]:
    """Run each command `runs` times, taking turns so drift in the machine hits all alike.

    Args:
        commands: Label to argv (argv[0] a path; no shell, no PATH search).
        runs: Timed runs of each command.
        rss: Also run each command once a round under GNU time for its peak RSS; those runs
            are not timed, so the wrapper never adds to the wall times.
        warmup: Rounds run first and discarded: they pay for a cold page cache and `.pyc` writes.
    """
    results = {label: ProcessRuns() for label in commands}
    for round_number in range(warmup + runs):
        for label, argv in commands.items():
            wall = wall_time(argv)
            peak = peak_rss_kib(argv) if rss else None
            if round_number >= warmup:
                results[label].walls.append(wall)
                if peak is not None:
                    results[label].peak_rss_kib.append(peak)
    return results


def tmux_session(socket: str, env: Mapping[str, str]) -> Callable[..., str]:
    """A tmux server of the benchmark's own (`socket`) holding a 160x48 session `bench`: the
    returned function runs `tmux ARGS` on it and gives its output (kill the server after)."""

    def tmux(*args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", socket, *args], check=True, capture_output=True, text=True, env=env
        ).stdout

    tmux("new-session", "-d", "-s", "bench", "-x", "160", "-y", "48", "sleep 600")
    return tmux
