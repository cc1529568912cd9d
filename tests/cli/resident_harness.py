"""A resident moot of a test's own (`tests/cli/test_resident*.py`): its runtime directory, which
holds its socket; its workspace, environment and scripted model; the `moot` runs made through it
or in their own process; and what `moot resident status` says of it.

Nothing sleeps to wait: `until` polls a condition (a status, /proc) with a deadline."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from moot_cli import TIMEOUT, moot_command, moot_env
from pty_moot import terminal_env
from tui.test_tui_tmux import Terminal
from tui.test_tui_tmux import _state as state

T = TypeVar("T")

START_TIMEOUT_S = 90.0
"""The resident process imports all of moot before it listens: seconds on a loaded machine."""
RUN_TIMEOUT_S = 60.0
"""A bound for a hung `moot`, never a wait."""
MOOT = Path(sys.executable).parent / "moot"
"""The `moot` a person runs (the console script), as the terminal tests run it."""
TERMINAL_ANSWERS = ("hello there", "second answer")
"""What the terminal tests' model answers: at once, and to the next prompt of the session."""


def until(probe: Callable[[], T], what: str | Callable[[], str], seconds: float = TIMEOUT) -> T:
    """Poll `probe` until it gives a true value, which is returned; fail after `seconds`,
    saying what was waited for (`what`, or what it returns then)."""
    deadline = time.monotonic() + seconds
    while not (found := probe()):
        if time.monotonic() >= deadline:
            said = what if isinstance(what, str) else what()
            raise AssertionError(f"timed out waiting for {said}")
        time.sleep(0.05)  # polling other processes, bounded by the deadline
    return found


def ended(pid: int) -> bool:
    """`pid` is gone or a zombie (a resident process's parent is init, which may reap it
    late); `state` says which state a process is in."""
    return state(pid) in ("Z", "gone")


def script(path: Path, *texts: str, rate: float | None = None) -> str:
    """A scripted model whose turns answer `texts` (streamed at `rate` tokens a second, 4
    characters a chunk, when given), written at `path`: its `--model`."""
    pace = {} if rate is None else {"rate": rate, "chunk_size": 4}
    path.write_text(json.dumps({"turns": [{"text": text, **pace} for text in texts]}))
    return f"scripted:{path}"


@dataclass
class Resident:
    """A resident moot of the test's own: `moot` (`command`) run with `env`, whose
    `XDG_RUNTIME_DIR` holds its socket, in `repo` goes through it; `model` answers `answers`.
    `pid` and `socket` are the resident process's, once `start` (or `up`) saw it answer."""

    repo: Path
    env: dict[str, str]
    model: str
    answers: tuple[str, ...]
    command: tuple[str, ...] = tuple(moot_command())
    pid: int = 0
    socket: str = ""

    def environ(self, own: bool = False, env: dict[str, str] | None = None) -> dict[str, str]:
        """This environment, with `env` over it; asking for no resident moot when `own`."""
        return {**self.env, **(env or {}), **({"MOOT_RESIDENT": "0"} if own else {})}

    def moot(
        self, *args: str, own: bool = False, env: dict[str, str] | None = None, **run: Any
    ) -> subprocess.CompletedProcess[str]:
        """`moot ARGS` in `repo` (or `cwd`), through the resident process, or in its own
        process (`own`); stdin is `input`, else empty."""
        if "input" not in run:
            run["stdin"] = subprocess.DEVNULL
        return subprocess.run(
            [*self.command, *args],
            cwd=run.pop("cwd", self.repo),
            env=self.environ(own, env),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            **run,
        )

    def popen(
        self, *args: str, own: bool = False, env: dict[str, str] | None = None, **popen: Any
    ) -> subprocess.Popen[bytes]:
        """`moot ARGS` in `repo`, started and left running."""
        return subprocess.Popen(
            [*self.command, *args], cwd=self.repo, env=self.environ(own, env), **popen
        )

    def ask(self, *args: str, **run: Any) -> subprocess.CompletedProcess[str]:
        """`moot -p ARGS` with the scripted model."""
        return self.moot("-p", *args, "--model", self.model, **run)

    def status(self, env: dict[str, str] | None = None) -> dict[str, str] | None:
        """What `moot resident status` says (`pid`, `served`, `children`, `socket`...), by
        line; None when no resident process answers."""
        done = self.moot("resident", "status", env=env)
        if done.returncode != 0:
            return None
        return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)

    def served(self, env: dict[str, str] | None = None) -> int:
        status = self.status(env)
        assert status is not None, f"the resident process is gone; its log:\n{self.log()}"
        return int(status["served"])

    def children(self) -> list[int]:
        status = self.status()
        assert status is not None, f"the resident process is gone; its log:\n{self.log()}"
        return [int(pid) for pid in status["children"].split() if pid != "-"]

    def only_child(self) -> int:
        """The one child running: the resident process's fork (its parent)."""
        status = self.status()
        assert status is not None
        [child] = self.children()
        assert _parent(child) == int(status["pid"])
        return child

    def start(self, env: dict[str, str] | None = None, **run: Any) -> dict[str, str]:
        """Run `moot -p` once (made as `run` says), which runs in its own process and starts
        the resident process as it ends; wait until that process answers; its status."""
        assert self.status(env) is None, "a resident process runs already"
        done = self.ask("hi", env=env, **run)
        assert (done.returncode, done.stdout) == (0, f"{self.answers[0]}\n"), done.stderr
        status = self.up(env)
        assert status["served"] == "0"  # the first run was moot's own
        return status

    def up(self, env: dict[str, str] | None = None) -> dict[str, str]:
        """Wait until a resident process answers; its status (`pid` and `socket` noted)."""
        status = until(
            lambda: self.status(env),
            lambda: f"the resident process; its log:\n{self.log()}",
            START_TIMEOUT_S,
        )
        self.pid, self.socket = int(status["pid"]), status["socket"]
        return status

    def stop(self) -> None:
        """Kill the resident process `start` saw, and wait until it is gone."""
        _kill(self.pid)

    def log(self) -> str:
        base = Path(self.env["XDG_RUNTIME_DIR"]) / "moot"
        return "\n".join(path.read_text() for path in base.glob("*.log"))


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rpartition(b")")[2].split()[1])


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    until(lambda: ended(pid), f"process {pid} to end")


def resident_processes(runtime: Path) -> list[int]:
    """The resident processes (and their children, forks of them) started with `runtime`, or
    a directory in it, as their XDG_RUNTIME_DIR: this test's only (another test's, running at
    the same time, has the same command line)."""
    mine = f"XDG_RUNTIME_DIR={runtime}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"moot.cli.resident.zygote" not in (entry / "cmdline").read_bytes():
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(line == mine or line.startswith(mine + b"/") for line in environ):
            pids.append(int(entry.name))
    return pids


def stop_all(runtime: Path) -> None:
    """Kill every resident process of `runtime` (`resident_processes`), running children
    included, and wait until each is gone."""
    for pid in resident_processes(runtime):
        _kill(pid)


def resident_in(
    tmp_path: Path,
    runtime: Path,
    env: dict[str, str],
    *answers: str,
    rate: float | None = None,
    command: tuple[str, ...] = tuple(moot_command()),
) -> Resident:
    """A resident moot's surroundings (not started: `Resident.start`): a git repository
    `tmp_path/repo`, `env` asking for a resident moot whose socket lies in `runtime`, a
    scripted model answering `answers` (at `rate`), and `moot` run as `command`."""
    if sys.platform != "linux":
        pytest.skip("the resident moot is Linux only")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    model = script(tmp_path / "answers.json", *answers, rate=rate)
    env = env | {"XDG_RUNTIME_DIR": str(runtime), "MOOT_RESIDENT": "1"}
    return Resident(repo, env, model, answers, command)


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A private runtime directory short enough for the socket's path (<= 107 bytes, which
    pytest's tmp_path may not be); every resident process started with it (or a directory in
    it) is killed at the end."""
    path = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    try:
        yield path
    finally:
        stop_all(path)
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def resident(tmp_path: Path, runtime: Path) -> Resident:
    """A resident moot for `moot` run as a command (the test's own MOOT_HOME, no MOOT_MODEL)."""
    return resident_in(tmp_path, runtime, moot_env(tmp_path / "home"), "hello from the script")


@pytest.fixture
def pty_resident(tmp_path: Path, runtime: Path) -> Resident:
    """A resident moot for `moot` in pexpect's terminal (`pty_moot.terminal_env`: no LANG, so
    the C locale, in which Python runs in UTF-8 mode)."""
    env = terminal_env(tmp_path)
    return resident_in(tmp_path, runtime, env, *TERMINAL_ANSWERS, rate=1000, command=(str(MOOT),))


@pytest.fixture
def tmux_resident(tmp_path: Path, runtime: Path, terminal: Terminal) -> Resident:
    """A resident moot for `moot` in the tmux terminal (its panes say `TERM_PROGRAM=tmux`,
    which Textual reads as it loads: their resident process is that variable's)."""
    made = resident_in(
        tmp_path, runtime, terminal.env, *TERMINAL_ANSWERS, rate=1000, command=(str(MOOT),)
    )
    terminal.env.update(XDG_RUNTIME_DIR=str(runtime), MOOT_RESIDENT="1")
    made.env["TERM_PROGRAM"] = "tmux"
    return made
