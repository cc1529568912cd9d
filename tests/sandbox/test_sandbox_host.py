"""The host backend: no containment, by design; still scrubbed, still killed as a group."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.host import HostSandbox
from sandbox_contract import gone, marker, on_host, processes_with


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[HostSandbox]:
    (tmp_path / "ws").mkdir()
    sandbox = HostSandbox(SandboxPolicy(tmp_path / "ws"), kill_grace=0.5)
    yield sandbox
    await sandbox.close()


async def test_the_host_contains_nothing(host: HostSandbox, tmp_path: Path) -> None:
    result = await host.run(
        f"echo x > {tmp_path}/outside.txt", cwd=host.workspace, env=os.environ, timeout=10
    )

    assert (result.exit_code, result.backend) == (0, "host")
    assert on_host(tmp_path / "outside.txt")


async def test_a_daemon_that_leaves_the_group_does_not_hang_the_command(host: HostSandbox) -> None:
    """`setsid` escapes the process group, so the host cannot kill it (bubblewrap can: its PID
    namespace dies with it); the command still returns although the daemon holds its pipes."""
    child = marker()
    started = time.monotonic()

    result = await host.run(
        f"setsid sleep {child} & echo done", cwd=host.workspace, env=os.environ, timeout=30
    )

    try:
        assert (result.exit_code, result.stdout) == (0, "done\n")
        assert time.monotonic() - started < 5
    finally:
        for line in processes_with(child):
            os.kill(int(line.partition(":")[0]), signal.SIGKILL)


async def test_without_pidfds_a_thread_watches_the_exit(
    host: HostSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kernels before 5.3 (and other systems) have no pidfd_open."""
    monkeypatch.delattr(os, "pidfd_open", raising=False)
    child = marker()

    done = await host.run("echo hi; exit 5", cwd=host.workspace, env=os.environ, timeout=10)
    killed = await host.run(f"sleep {child}", cwd=host.workspace, env=os.environ, timeout=0.3)

    assert (done.exit_code, done.stdout) == (5, "hi\n")
    assert killed.timed_out
    assert await gone(child) == []
