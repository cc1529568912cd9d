"""Commands as local process groups; `HostSandbox` runs them on the host as they are.

`ProcessSandbox` holds what the host and bubblewrap backends share: output capture and
files, timeouts and kills, background commands. A subclass says how a command starts
(`launch`: its argv, and file descriptors it inherits) and what environment it gets
(`command_env`).

The host backend contains nothing: a command can write anywhere the user can and reach the
network. It is used only when chosen (`sandbox: "none"`, or bypass mode with no sandbox that
works; see `select.py`), and its results say `backend="host"` so front ends can show it. Its
commands still get only the variables `env.scrub_env` passes, and it still kills whole process
groups.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from collections.abc import Mapping
from pathlib import Path

import msgspec

from moot.sandbox.background import LocalBackgroundProcess
from moot.sandbox.base import BackgroundProcess, CommandResult, OutputCallback, SandboxPolicy
from moot.sandbox.env import scrub_env
from moot.sandbox.output import MAX_OUTPUT_CHARS, OutputCapture, OutputDir
from moot.sandbox.process import KILL_GRACE, GroupProcess, Spawn, wait_for_end
from moot.sandbox.set_id import SetIdSweep, with_cleared

SETUP_TRIES = 3
"""How often a command is started whose wrapper failed before it ran (`setup_failed`):
bubblewrap's read-only bind of `/` races mounts that go meanwhile (Docker's, as containers
come and go; about one start in a thousand while they churn)."""


class Launch(msgspec.Struct, frozen=True):
    """How a command starts: its argv, and open file descriptors it inherits (the argv names
    them); the sandbox closes them in this process once the command has started, or failed to."""

    argv: list[str]
    fds: tuple[int, ...] = ()
    spawn: Spawn | None = None
    """Starts the command instead of `subprocess.Popen` (Landlock's zygote)."""
    started: int | None = None
    """The read end of a pipe the command's shell writes a byte to just before it runs the
    command (`marked_start`), for a wrapper that can fail before that: nothing there once it
    has ended means the command never ran. Not among `fds`; `ran` reads and closes it."""

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def ran(self) -> bool:
        """Whether the command began (True without a `started` pipe); closes that pipe.
        Asked once the command has ended, whose shell closed the write end at once."""
        if self.started is None:
            return True
        try:
            os.set_blocking(self.started, False)
            return os.read(self.started, 1) != b""
        except OSError:  # BlockingIOError: nothing written, a writer still open
            return False
        finally:
            os.close(self.started)


def marked_start(command: str) -> tuple[list[str], int, int]:
    """bash running `command` once it has written a byte to a new pipe, whose write end it
    closes first (nothing the command starts holds it): the argv, the read end for
    `Launch.started`, and the write end, which the command must inherit.

    The mark goes on the command's own first line, so bash reports line numbers as before;
    a syntax error in that line keeps the mark from being written, and is no setup failure
    (bash says so, not the wrapper)."""
    started, mark = os.pipe()
    return ["bash", "-c", f"printf . >&{mark}; exec {mark}>&-; {command}"], started, mark


class ProcessSandbox:
    """A `Sandbox` whose commands are local process groups; subclasses choose the wrapping."""

    name = "host"
    wrapper = False
    """Whether `launch` wraps the command in another program (see `GroupProcess`)."""

    def __init__(
        self,
        policy: SandboxPolicy,
        *,
        kill_grace: float = KILL_GRACE,
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ) -> None:
        """Args:
        policy: The workspace and what commands may touch.
        kill_grace: Seconds between SIGTERM and SIGKILL when a command is killed.
        max_output_chars: What a result shows of a command's output at most.
        """
        self.policy = policy
        self.workspace = Path(os.path.realpath(policy.workspace))
        self.kill_grace = kill_grace
        self.max_output_chars = max_output_chars
        self.outputs = OutputDir(self.workspace, policy.output_dir)
        """Where full outputs of long commands are saved."""
        self.set_id_sweep: SetIdSweep | None = None
        """Clears the set-id bits commands leave in the workspace as each ends; None where
        nothing needs it (the kernel refuses them, or nothing is contained)."""
        self._background: list[LocalBackgroundProcess] = []

    async def launch(self, command: str, cwd: Path, *, marked: bool = False) -> Launch:
        """How to run `command` with bash in `cwd` (async: working it out may read the disk,
        which a backend does off the event loop). `marked`: a wrapper that can fail before
        the command runs says whether it did (`Launch.started`); a foreground run reads it,
        a background command is never started twice."""
        return Launch(["bash", "-c", command])

    def command_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The environment a command gets: the variables of `env` that `scrub_env` passes."""
        return scrub_env(env, named=self.policy.env_names)

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run `command` to its end or its timeout (see `Sandbox.run`).

        Raises:
            OSError: The command could not be started (no bash, no such directory).
            asyncio.CancelledError: After the command's whole process group was killed.
        """
        started = time.perf_counter()
        for _ in range(SETUP_TRIES - 1):
            result, ran = await self._run_once(command, cwd, env, timeout, on_output, started)
            if ran or not self.setup_failed(result):
                return result
        return (await self._run_once(command, cwd, env, timeout, on_output, started))[0]

    def setup_failed(self, result: CommandResult) -> bool:
        """Whether a command that never ran (`Launch.ran`) ended so because its wrapper failed
        to set up, which the next start may not: never, for a command run as it is."""
        return False

    async def _run_once(
        self,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None,
        started: float,
    ) -> tuple[CommandResult, bool]:
        """One start of `command`: its result, and whether it ran (`Launch.ran`)."""
        capture = OutputCapture(
            self.outputs, limit=self.max_output_chars, on_output=on_output, name="cmd"
        )
        sweep = self.set_id_sweep
        token = sweep.begin() if sweep is not None else 0
        launch = None
        try:
            launch = await self.launch(command, cwd, marked=True)
            try:
                process = GroupProcess(
                    launch.argv,
                    cwd=cwd,
                    env=self.command_env(env),
                    capture=capture,
                    wrapper=self.wrapper,
                    pass_fds=launch.fds,
                    spawn=launch.spawn,
                )
            finally:
                launch.close()
            code = await wait_for_end(process, timeout, self.kill_grace)
        except BaseException:
            capture.close()
            if launch is not None:
                launch.ran()  # closes the pipe
            if sweep is not None:  # a killed command may have set bits too
                await asyncio.shield(sweep.end(token))
            raise
        ran = launch.ran()
        result = capture.finish().result(code, started, self.name)
        result = result if sweep is None else with_cleared(result, await sweep.end(token))
        return result, ran

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        """Start `command` in the background; its id is `shell_<n>`, unique in this sandbox.

        Raises:
            OSError: The command could not be started.
        """
        launch = await self.launch(command, cwd)  # before the id: no await between them
        sweep = self.set_id_sweep
        token = sweep.begin() if sweep is not None else 0
        try:
            process = LocalBackgroundProcess(
                f"shell_{len(self._background) + 1}",
                launch.argv,
                cwd=cwd,
                env=self.command_env(env),
                files=self.outputs,
                limit=self.max_output_chars,
                kill_grace=self.kill_grace,
                wrapper=self.wrapper,
                pass_fds=launch.fds,
                spawn=launch.spawn,
                on_end=None if sweep is None else functools.partial(sweep.end, token),
            )
        except BaseException:
            if sweep is not None:
                await sweep.end(token)
            raise
        finally:
            launch.close()
        self._background.append(process)
        return process

    async def close(self) -> None:
        """Kill every background command still running."""
        await asyncio.gather(*(process.kill() for process in self._background))


class HostSandbox(ProcessSandbox):
    """No containment: commands run on the host, as the user. Only ever chosen deliberately."""

    name = "host"
