"""A real `kill -9` of `moot -p` while a sandboxed command starts: nothing it started lives on
(no `bwrap`, no command, whether bubblewrap had armed `--die-with-parent` or not) and the
sandbox's temporary directories go, within a bounded time (`sandbox/sentinel.py`,
`landlock_zygote.py`). Killed at the first sight of the sandbox's process, several times, to
hit bubblewrap's early window; as the tool starts, and as the sandbox's first directory
appears (before the sandbox's process); and once the command's double-forked `setsid`
escapee runs. Under Docker, no container of that moot's (sandbox or network relay) is left
either (`docker_sentinel`), killed before its container, as it is made, once its relay
exists, and while the command runs."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from moot.protocol import events as ev
from moot_cli import moot_command, moot_env
from sandbox_contract import BACKENDS, DOCKER, require

TIMEOUT = 30.0
GONE_WITHIN = 10.0
WHEN = ("seen", "seen", "seen", "at once", "made", "made", "made", "escaped")
"""When each round kills moot (`run_and_kill`)."""
LEFT = ("moot-sandbox-", "moot-net-")
"""What the sandbox makes in `$TMPDIR`."""


def ours(marker: str) -> dict[int, str]:
    """The processes whose command line names `marker` (bwrap names the workspace, the command
    the marker), by pid."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as file:
                line = file.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry.name}/stat", "rb") as file:
                state = file.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if marker in line and state != b"Z":
            found[int(entry.name)] = line
    return found


def kill_all(pids: dict[int, str]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def ready(when: str, marker: str, tmp: Path) -> bool:
    """Whether to kill moot now: `at once` as the tool starts; once the sandbox has `made` a
    directory in `tmp`; once a process naming `marker` (bwrap, the zygote's child, the
    command) is `seen`; once the command's escapee (a double fork into a session of its own)
    has `escaped`."""
    if when in ("at once", "made"):
        return when == "at once" or any(p.name.startswith(LEFT) for p in tmp.iterdir())
    lines = ours(marker).values()
    return bool(lines) if when == "seen" else any(line.startswith("sh -c") for line in lines)


def run_and_kill(
    tmp_path: Path,
    tmp: Path,
    backend: str,
    marker: str,
    when: str,
    now: Callable[[int], bool] | None = None,
) -> int:
    """Start a long command under `backend` in `moot -p` and SIGKILL moot when `ready` (or
    `now(moot's pid)`); moot's pid. What moot printed then reaches its end: no helper holds
    moot's output open. `tmp` is its `$TMPDIR`."""
    work = tmp_path / "work"
    work.mkdir()
    # A network setting: the session's proxy starts, with its socket's `moot-net-*` directory.
    (work / ".moot").mkdir()
    network = {"sandbox": {"network": {"deniedDomains": ["denied.test"]}}}
    (work / ".moot" / "settings.json").write_text(json.dumps(network))
    loop = f"while :; do sleep 1; done # {marker}"
    command = f"(setsid sh -c '{loop}' &); {loop}"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "bash", "arguments": {
        "command": command}}]}, "done"]))  # fmt: skip
    env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": backend, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        moot_command("-p", "run it", "--model", f"scripted:{script}", "--output-format",
                     "events", "--permission-mode", "bypassPermissions"),
        cwd=work, env=env, text=True, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if isinstance(ev.event_from_json(line), ev.ToolStarted):
                break
        else:
            raise AssertionError(f"the run ended first: {proc.stderr and proc.stderr.read()}")
        deadline = time.monotonic() + TIMEOUT
        while not (now(proc.pid) if now else ready(when, marker, tmp)):
            if time.monotonic() > deadline or proc.poll() is not None:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=TIMEOUT)  # both at their end: nothing else holds them
    assert proc.returncode == -signal.SIGKILL, f"moot ended first: {out}{err}"
    return proc.pid


def left_behind(tmp: Path, marker: str) -> tuple[dict[int, str], list[str]]:
    """What is still there once moot is dead, polled until nothing is or `GONE_WITHIN`."""
    deadline = time.monotonic() + GONE_WITHIN
    while True:
        processes = ours(marker)
        dirs = sorted(p.name for p in tmp.iterdir() if p.name.startswith(LEFT))
        if (not processes and not dirs) or time.monotonic() > deadline:
            return processes, dirs
        os.sched_yield()


@pytest.mark.parametrize("backend", ["bubblewrap", "landlock"])
def test_a_kill_9_as_a_command_starts_leaves_no_process_and_no_temporary_directory(
    tmp_path: Path, backend: str
) -> None:
    require(BACKENDS[backend])
    for round, when in enumerate(WHEN):
        here = tmp_path / str(round)
        here.mkdir()
        marker = f"moot-killed-{os.getpid()}-{here.name}-{tmp_path.name}"
        # Short: the network proxy's socket lies there (a Unix socket's path is short).
        tmp = Path(tempfile.mkdtemp(prefix="mk-", dir="/tmp"))
        try:
            run_and_kill(here, tmp, backend, marker, when)
            processes, dirs = left_behind(tmp, marker)
        finally:
            kill_all(ours(marker))  # never leave them running, whatever the verdict
            shutil.rmtree(tmp, ignore_errors=True)
        assert not processes, f"round {round}: still running after moot's kill -9: {processes}"
        assert not dirs, f"round {round}: left in $TMPDIR: {dirs}"


DOCKER_WHEN = ("at once", "made", "container", "container", "relay", "seen", "escaped")
"""When each Docker round kills moot: `ready`'s; once a `container` labelled as moot's exists
(being made or started: its relay not made yet); once its network `relay` exists."""
DOCKER_GONE_WITHIN = 30.0


def containers_of(engine: Any, pid: int) -> list[str]:
    """The containers (relays included) labelled as the process `pid`'s on this host."""
    owner = {"label": [f"moot.pid={pid}", f"moot.host={socket.gethostname()}"]}
    return [c.name for c in engine.containers.list(all=True, filters=owner, ignore_removed=True)]


def docker_ready(engine: Any, when: str, marker: str, tmp: Path, moot: int) -> bool:
    """Whether to kill moot (pid `moot`) now, in a Docker round (`DOCKER_WHEN`)."""
    if when not in ("container", "relay"):
        return ready(when, marker, tmp)
    names = containers_of(engine, moot)
    return any(name.endswith("-net") for name in names) if when == "relay" else bool(names)


def test_a_kill_9_of_a_docker_session_leaves_no_container_process_or_directory(
    tmp_path: Path,
) -> None:
    """moot's sentinel removes the session's container and its network relay once moot is
    killed, at every moment of the command's start (`docker_sentinel`), not the next session."""
    require(DOCKER)
    import docker

    engine = docker.from_env()
    try:
        for round, when in enumerate(DOCKER_WHEN):
            here = tmp_path / str(round)
            here.mkdir()
            marker = f"moot-killed-{os.getpid()}-{here.name}-{tmp_path.name}"
            tmp = Path(tempfile.mkdtemp(prefix="mk-", dir="/tmp"))
            pid = 0

            now = functools.partial(docker_ready, engine, when, marker, tmp)
            try:
                pid = run_and_kill(here, tmp, "docker", marker, when, now)
                deadline = time.monotonic() + DOCKER_GONE_WITHIN
                while (left := containers_of(engine, pid)) and time.monotonic() < deadline:
                    os.sched_yield()
                processes, dirs = left_behind(tmp, marker)
            finally:
                for name in containers_of(engine, pid) if pid else ():
                    with contextlib.suppress(docker.errors.APIError):
                        engine.containers.get(name).remove(force=True)
                kill_all(ours(marker))
                shutil.rmtree(tmp, ignore_errors=True)
            assert not left, f"round {round} ({when}): containers after moot's kill -9: {left}"
            assert not processes, f"round {round} ({when}): still running: {processes}"
            assert not dirs, f"round {round} ({when}): left in $TMPDIR: {dirs}"
    finally:
        engine.close()
