"""A resident moot (`moot.cli.resident`) of a benchmark's own, for the rows that time a start
through it in the same rounds as the same start in process and the bare toolkit.

Its socket lives in `$XDG_RUNTIME_DIR/moot`: each benchmark gives it a short directory of its
own under /tmp (mode 0700), so that no resident process of the person's is used or disturbed,
and `close` ends the one the benchmark started. The in-process runs say `MOOT_RESIDENT=0`,
the resident ones `MOOT_RESIDENT=1` (`env`).

The first resident run finds no resident process: it runs in process and starts one as it
ends (the cold start, reported on its own line, never in a ratio). The timed runs count only
if they all went through that one process: `moot resident status` must name the same process
after them, its `served` count up by exactly their number (`Served.missed`); else the row says
so and fails (`Row.missed`) rather than report an in-process time as a resident one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from report import Row, ms
from timing import VENV_BIN, cpu_seconds

LISTEN_TIMEOUT_S = 120.0
"""The resident process imports the front ends before it listens: seconds on a loaded machine."""


@dataclass(frozen=True)
class Served:
    """What `moot resident status` says of the process."""

    pid: int
    served: int
    """Runs forked so far."""

    def missed(self, after: Served | None, runs: int) -> str | None:
        """Why `runs` runs between this status and `after` did not all go through this
        process, or None when they did."""
        if after is None:
            return "no resident moot answered `moot resident status` after the runs"
        if after.pid != self.pid:
            return f"another resident process served them ({self.pid}, then {after.pid})"
        if after.served - self.served != runs:
            return f"it served {after.served - self.served} of {runs} runs"
        return None


class ResidentMoot:
    """A private `XDG_RUNTIME_DIR` and the resident moot that starts in it."""

    def __init__(self) -> None:
        # Short: a Unix socket's path is at most 107 bytes.
        self.runtime = Path(tempfile.mkdtemp(prefix="moot-bench-", dir="/tmp"))
        self.runtime.chmod(0o700)
        self.started: Served | None = None
        self.status_env: dict[str, str] = {}

    def __enter__(self) -> ResidentMoot:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def env(self, env: Mapping[str, str], *, resident: bool) -> dict[str, str]:
        """`env` for a run in process (`resident=False`) or through the resident process."""
        return {**env, "XDG_RUNTIME_DIR": str(self.runtime), "MOOT_RESIDENT": str(int(resident))}

    def status(self, env: Mapping[str, str] | None = None) -> Served | None:
        """`moot resident status`, run with `env` (the values of what the resident process's
        imports read name its socket: a run's own environment; by default the last one
        given); None when no resident process answers."""
        if env is not None:
            self.status_env = self.env(env, resident=True)
        done = subprocess.run(
            [str(VENV_BIN / "moot"), "resident", "status"],
            env=self.status_env,
            cwd=self.runtime,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            return None
        said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
        return Served(int(said["pid"]), int(said["served"]))

    def listening(self, since: float) -> float:
        """Seconds from `since` (the cold start's end) to the resident process's socket
        appearing (it is renamed into place once it listens)."""
        sockets = self.runtime / "moot"
        deadline = time.perf_counter() + LISTEN_TIMEOUT_S
        while not any(sockets.glob("*.sock")):
            if time.perf_counter() > deadline:
                logs = " ".join(p.read_text()[-300:] for p in sockets.glob("*.log"))
                raise RuntimeError(f"no resident moot listened in {LISTEN_TIMEOUT_S:.0f} s {logs}")
            time.sleep(0.002)
        return time.perf_counter() - since

    def cold(self, env: Mapping[str, str]) -> None:
        """Before the cold start: no resident process may answer yet."""
        if (found := self.status(env)) is not None:
            raise RuntimeError(f"a resident moot (pid {found.pid}) runs before the cold start")

    def serving(self, env: Mapping[str, str] | None = None) -> Served:
        """After the cold start: the process now listening, before the timed runs."""
        self.started = self.status(env)
        if self.started is None:
            raise RuntimeError("a resident moot listens; `moot resident status` gets no answer")
        return self.started

    def fork_cpu(self) -> float:
        """The CPU time used so far by the newest fork of the resident process (the run on
        screen: the client standing in for it uses little of its own)."""
        assert self.started is not None
        pid = self.started.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if not children:
            return 0.0

        def started(child: str) -> int:
            try:
                return int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[19])
            except (OSError, IndexError, ValueError):  # ended meanwhile
                return -1

        return cpu_seconds(int(max(children, key=started)))

    def unserved(self, what: str, runs: int, target: str) -> Row | None:
        """None when `moot resident status` says the process `serving` named served all `runs`
        runs since (the timed ones and the warm-up); else the row `what`, failing, saying why.
        """
        assert self.started is not None
        why = self.started.missed(self.status(), runs)
        if why is None:
            return None
        print(f"bench: {what}: NOT through the resident moot: {why}", file=sys.stderr)
        return Row(what, f"NOT through the resident moot: {why}", target, missed=True)

    def close(self) -> None:
        """`moot resident stop`, wait for the process to end, remove the directory."""
        try:
            if self.status_env and (last := self.status()) is not None:
                subprocess.run(
                    [str(VENV_BIN / "moot"), "resident", "stop"],
                    env=self.status_env,
                    cwd=self.runtime,
                    capture_output=True,
                    check=False,
                )
                deadline = time.perf_counter() + 30
                while _alive(last.pid) and time.perf_counter() < deadline:
                    time.sleep(0.01)
        finally:
            shutil.rmtree(self.runtime, ignore_errors=True)


def cold_row(what: str, cold: float, listened: float) -> Row:
    """The cold start's line: a reference, never part of a ratio."""
    return Row(
        f"  resident, cold: {what} (in process: none yet; it starts one as it ends)",
        f"{ms(cold)}, then listening {ms(listened)} after that moot ended",
        "(reference)",
    )


def environ_of(pid: int) -> dict[str, str]:
    """The environment process `pid` was started with."""
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "surrogateescape")
    return dict(entry.split("=", 1) for entry in raw.split("\0") if "=" in entry)


def ended(pid: int, timeout: float = 30.0) -> float:
    """The moment process `pid` is seen to have ended (`time.perf_counter`)."""
    deadline = time.perf_counter() + timeout
    while _alive(pid):
        if time.perf_counter() > deadline:
            raise TimeoutError(f"process {pid} still runs after {timeout:.0f} s")
        time.sleep(0.002)
    return time.perf_counter()


def _alive(pid: int) -> bool:
    """The process runs (a zombie has ended: whoever adopted it reaps it)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
