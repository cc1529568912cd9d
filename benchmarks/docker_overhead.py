"""What the Docker sandbox costs: a command in a running container, and a session's first one.

`DockerSandbox.run("true")` in a fresh temporary workspace, timed from the call to the result:
once the container runs, each command is one `docker exec` (create, start and stream, inspect)
plus moot's wrapper (a `sh` that reaps what the command left behind). A session's first
command also starts the container (create with the workspace mounts, start, look up the
image's shell, remove orphans first); each sample is a new session, closed after it. For
reference, the same `true` through docker-py's exec with no wrapper. Needs a Docker engine and
the image `scripts/sandbox-image` builds; without them the rows say why.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.docker import DockerSandbox, docker_unavailable
from report import Row, ms, table
from timing import median, percentile

NAME = "docker"
TARGET = "exec <= 150 ms; first command <= 1.5 s"
EXEC_TARGET = "<= 150 ms"
FIRST_TARGET = "<= 1.5 s"


async def _time_execs(workspace: Path, commands: int) -> tuple[list[float], list[float]]:
    """Seconds per `run("true")` in one running container, and per bare docker-py exec."""
    sandbox = DockerSandbox(SandboxPolicy(workspace), session_id=f"bench-{uuid.uuid4().hex[:8]}")
    try:
        for _ in range(3):  # the container starts here; the first execs warm the engine
            await sandbox.run("true", cwd=workspace, env={}, timeout=30)
        runs = []
        for _ in range(commands):
            started = time.perf_counter()
            result = await sandbox.run("true", cwd=workspace, env={}, timeout=30)
            runs.append(time.perf_counter() - started)
            assert result.exit_code == 0, result.stderr
        container = sandbox.container
        assert container is not None
        bare = []
        for _ in range(commands):
            started = time.perf_counter()
            code, _ = await asyncio.to_thread(container.exec_run, ["true"])
            bare.append(time.perf_counter() - started)
            assert code == 0
        return runs, bare
    finally:
        await sandbox.close()


async def _time_first_commands(workspace: Path, sessions: int) -> list[float]:
    """Seconds from a new session's first `run` call to its result, container start included."""
    firsts = []
    for _ in range(sessions):
        sandbox = DockerSandbox(
            SandboxPolicy(workspace), session_id=f"bench-{uuid.uuid4().hex[:8]}"
        )
        try:
            started = time.perf_counter()
            result = await sandbox.run("true", cwd=workspace, env={}, timeout=60)
            firsts.append(time.perf_counter() - started)
            assert result.exit_code == 0, result.stderr
        finally:
            await sandbox.close()
    return firsts


def run(*, quick: bool) -> list[Row]:
    """Time execs in a running container and first commands of new sessions."""
    reason = docker_unavailable()
    if reason is not None:
        return [
            Row("docker exec overhead per command", f"not measured ({reason})", EXEC_TARGET),
            Row("docker first command of a session", "not measured", FIRST_TARGET),
        ]
    commands, sessions = (10, 2) if quick else (30, 5)
    with tempfile.TemporaryDirectory(prefix="moot-bench-docker-") as scratch:
        workspace = Path(scratch)
        runs, bare = asyncio.run(_time_execs(workspace, commands))
        firsts = asyncio.run(_time_first_commands(workspace, sessions))
    return [
        Row(
            f"docker exec overhead per command, container running (median of {commands} `true`)",
            f"p50 {ms(median(runs))}, p95 {ms(percentile(runs, 95))}",
            EXEC_TARGET,
        ),
        Row(
            f"docker first command of a session, container start included (median of {sessions})",
            f"p50 {ms(median(firsts))}, max {ms(max(firsts))}",
            FIRST_TARGET,
        ),
        Row(
            "  reference: docker-py exec_run of `true`, no moot wrapper",
            f"p50 {ms(median(bare))}",
        ),
    ]


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
