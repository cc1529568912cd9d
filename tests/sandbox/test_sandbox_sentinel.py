"""The sentinel (`sandbox/sentinel.py`) as a real process: it outlives what reaches moot's
process group, holds none of moot's output, and once moot is killed ends what carries its mark
and removes the directories it was told of; directories moot removed itself stay forgotten."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from moot.sandbox.base import SandboxPolicy
from moot.sandbox.landlock import LandlockSandbox
from moot.sandbox.sentinel import descendants, marked, sentinel
from sandbox_contract import BACKENDS, require

GONE_WITHIN = 10.0

OWNER = textwrap.dedent(
    """
    import signal, subprocess, sys
    from moot.sandbox.sentinel import private_dir, remove_dir, sentinel

    for ignored in (signal.SIGINT, signal.SIGHUP):  # as moot handles them itself
        signal.signal(ignored, signal.SIG_IGN)
    kept, removed = private_dir("moot-sandbox-kept-"), private_dir("moot-sandbox-removed-")
    mark = sentinel().started()
    runner = subprocess.Popen(
        ["sh", "-c", "while :; do sleep 1; done", "sh", mark], start_new_session=True
    )
    remove_dir(removed)
    removed.mkdir()  # made again by someone else: no longer the sentinel's to remove
    print(kept, removed, mark, runner.pid, flush=True)
    sys.stdin.read()
    """
)


def cmdline(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as file:
        return file.read().decode(errors="replace")


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rpartition(b")")[2].split()[0].decode()


def until(done: Callable[[], bool], within: float = GONE_WITHIN) -> bool:
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            return False
        os.sched_yield()
    return True


def test_the_sentinel_outlives_signals_to_moots_group_and_cleans_up_once_moot_is_killed(
    tmp_path: Path,
) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], env={**os.environ, "TMPDIR": str(tmp_path)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert owner.stdout is not None
    kept, removed, mark, runner = owner.stdout.readline().split()
    try:
        (guard,) = [pid for pid in marked(mark) if "moot.sandbox.sentinel" in cmdline(pid)]
        for sig in (signal.SIGINT, signal.SIGHUP):
            os.killpg(owner.pid, sig)
        assert owner.poll() is None
        assert until(lambda: int(runner) in marked(mark))
        assert guard in marked(mark), "the sentinel must outlive moot's group's signals"

        owner.kill()
        owner.communicate(timeout=GONE_WITHIN)  # its output ends: the sentinel holds none

        assert until(lambda: not marked(mark)), "the marked process and the sentinel end"
        assert until(lambda: not Path(kept).exists())
        assert Path(removed).is_dir()
    finally:
        owner.kill()
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)
        if Path(removed).is_dir():
            Path(removed).rmdir()


SEATBELT_OWNER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from moot.sandbox.base import SandboxPolicy
    from moot.sandbox.seatbelt import SeatbeltSandbox

    sandbox = SeatbeltSandbox(SandboxPolicy(workspace=Path(sys.argv[1])))
    print(sandbox.tmp, sandbox.git_config().parent, flush=True)
    sys.stdin.read()
    """
)


def test_a_killed_moots_seatbelt_directories_are_removed_by_its_sentinel(tmp_path: Path) -> None:
    # Seatbelt runs on macOS only, but its directories are made here as there: the session's
    # TMPDIR and the commands' git config, which a kill -9 used to leave behind.
    (work := tmp_path / "work").mkdir()
    (home := tmp_path / "home").mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n")  # a config of their own, then
    owner = subprocess.Popen(
        [sys.executable, "-c", SEATBELT_OWNER, str(work)],
        env={**os.environ, "TMPDIR": str(tmp_path), "HOME": str(home)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert owner.stdout is not None
    made = [Path(name) for name in owner.stdout.readline().split()]
    assert len(made) == 2 and all(directory.is_dir() for directory in made), made

    owner.kill()
    owner.communicate(timeout=GONE_WITHIN)

    assert until(lambda: not any(directory.exists() for directory in made)), made


PLANTED = ("json", "secrets", "shutil", "socket", "select", "ctypes", "contextlib", "threading")
"""Modules the helpers import after Python's start, planted in the working directory."""


def plant(directory: Path, canary: Path) -> None:
    for name in PLANTED:
        (directory / f"{name}.py").write_text(f"open({str(canary)!r}, 'a').write({name!r})\n")


def test_the_sentinel_imports_nothing_from_moots_working_directory(tmp_path: Path) -> None:
    # moot runs in the workspace: `python -m` would put it first on the helper's import path,
    # and a repository's `json.py` would run on the host, outside any sandbox.
    work, canary = tmp_path / "work", tmp_path / "imported"
    work.mkdir()
    plant(work, canary)
    start = "from moot.sandbox.sentinel import sentinel; print(sentinel().started())"
    mark = subprocess.run(
        [sys.executable, "-P", "-c", start], cwd=work, capture_output=True, text=True, check=True
    ).stdout.strip()

    assert until(lambda: not marked(mark)), "the sentinel ends with its owner"
    assert not canary.exists(), canary.read_text()


async def test_the_landlock_zygote_imports_nothing_from_moots_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(BACKENDS["landlock"])
    work, canary = tmp_path / "work", tmp_path / "imported"
    work.mkdir()
    plant(work, canary)
    monkeypatch.chdir(work)
    sandbox = LandlockSandbox(SandboxPolicy(workspace=work))
    try:
        result = await sandbox.run("echo ran", cwd=work, env=dict(os.environ), timeout=30)
    finally:
        await sandbox.close()

    assert result.stdout == "ran\n"
    assert not canary.exists(), canary.read_text()


@pytest.mark.parametrize("backend", ["bubblewrap", "landlock"])
async def test_a_command_cannot_end_the_sentinel_or_the_zygote(
    tmp_path: Path, backend: str
) -> None:
    require(BACKENDS[backend])
    sandbox = BACKENDS[backend].make(SandboxPolicy(workspace=tmp_path))
    try:
        await sandbox.run("true", cwd=tmp_path, env=dict(os.environ), timeout=30)
        mark = sentinel().mark
        (guard,) = [pid for pid in marked(mark) if "moot.sandbox.sentinel" in cmdline(pid)]
        helpers = {guard}
        if isinstance(sandbox, LandlockSandbox):
            helpers |= {pid for pid in descendants(os.getpid()) if "zygote" in cmdline(pid)}
        assert len(helpers) == (2 if backend == "landlock" else 1)
        pids = " ".join(map(str, helpers))

        result = await sandbox.run(
            f"kill -9 {pids}; kill -STOP {pids}; echo $?", cwd=tmp_path, env=dict(os.environ),
            timeout=30,
        )  # fmt: skip

        assert result.stdout.strip() == "1", result
        assert all(state(pid) in ("S", "R") for pid in helpers)  # neither killed nor stopped
    finally:
        await sandbox.close()


async def test_a_zygote_whose_moot_dies_before_it_answers_a_start_ends_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moot killed between asking for a command and the zygote's answer (the kill -9 test's
    "seen" rounds hit it about one time in three): the answer's write failed, which ended the
    zygote in a traceback before it ended what it had just started."""
    from moot.sandbox.landlock_spawn import Zygote

    require(BACKENDS["landlock"])
    marker = f"moot-unanswered-{os.getpid()}-{tmp_path.name}"

    def killed_meanwhile(self: Zygote, channel: object) -> dict[str, object]:
        self.stop()  # moot's end closes before it reads the answer, as at a kill -9 then
        raise OSError("moot is gone")

    monkeypatch.setattr(Zygote, "_answer", killed_meanwhile)
    sandbox = LandlockSandbox(SandboxPolicy(workspace=tmp_path))
    try:
        await sandbox.run(
            f"while :; do sleep 1; done # {marker}", cwd=tmp_path, env=dict(os.environ), timeout=30
        )
    except OSError:
        pass  # refused or told as the command's error: either way, what matters is below
    finally:
        await sandbox.close()

    def running() -> list[int]:
        found = []
        for pid in (int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()):
            with contextlib.suppress(OSError, IndexError):  # it ended meanwhile
                if marker in cmdline(pid) and state(pid) != "Z":
                    found.append(pid)
        return found

    try:
        assert until(lambda: not running()), "the command outlived its zygote"
    finally:
        for pid in running():
            os.kill(pid, signal.SIGKILL)


DOCKER_OWNER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from moot.sandbox.docker_sentinel import engine_record
    from moot.sandbox.sentinel import marked, sentinel

    sentinel().watch_docker(engine_record({"DOCKER_HOST": f"unix://{sys.argv[1]}"}))
    # Polled: a process just spawned shows an empty command line until its exec sets it up.
    deadline = time.monotonic() + 30
    while not (found := marked(sentinel().mark)) and time.monotonic() < deadline:
        os.sched_yield()
    guards = [p for p in found if b"sentinel" in Path(f"/proc/{p}/cmdline").read_bytes()]
    print(guards[0] if guards else -1, flush=True)  # -1: the test fails at once, saying so
    sys.stdin.read()
    """
)


def test_an_engine_that_never_answers_keeps_the_sentinel_a_bounded_time(tmp_path: Path) -> None:
    """Told of a Docker engine, the sentinel reaches it once moot is gone (`docker_sentinel`);
    an engine that takes the connection and never answers costs it `REQUEST_TIMEOUT`, then
    it exits."""
    from moot.sandbox.docker_sentinel import REQUEST_TIMEOUT

    mute = socket.socket(socket.AF_UNIX)
    mute.bind(str(tmp_path / "engine.sock"))
    mute.listen(8)
    owner = subprocess.Popen(
        [sys.executable, "-c", DOCKER_OWNER, str(tmp_path / "engine.sock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert owner.stdout is not None
    guard = int(owner.stdout.readline())
    try:
        assert guard > 0, "the owner never saw its sentinel"
        owner.kill()
        owner.communicate(timeout=GONE_WITHIN)
        mute.settimeout(GONE_WITHIN)
        reached, _ = mute.accept()  # what never answers: the sentinel reached the engine
        assert until(lambda: not alive(guard), within=REQUEST_TIMEOUT + GONE_WITHIN)
        reached.close()
    finally:
        owner.kill()
        with contextlib.suppress(ProcessLookupError):
            os.kill(guard, signal.SIGKILL)
        mute.close()


def alive(pid: int) -> bool:
    try:
        return state(pid) != "Z"
    except OSError:
        return False
