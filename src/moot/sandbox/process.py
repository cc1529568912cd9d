"""A command as a process group on this machine: spawn, stream its output, kill all of it.

The host and bubblewrap backends both run a local process: `bash -c` directly, or `bwrap ...
bash -c`. It starts in a new session (`start_new_session`), so it leads a process group of its
own, with stdin on /dev/null. On timeout or cancellation it gets SIGTERM and, after a grace
period, the whole tree is frozen (SIGSTOP) and killed (SIGKILL): the group, and every
descendant of the leader even if it left the group. When the command ends by itself, whatever
it left running in its group is killed too, so a command never outlives its call
(`run_in_background` is for that). Under bubblewrap the group holds only `bwrap`; SIGTERM goes
to the processes inside instead (see `GroupProcess.terminate`), and the end of `bwrap` takes
the sandbox's PID namespace, and every process in it, along.

Not asyncio's subprocess API: on Python 3.11 `Process.wait()` does not return until the
output pipes close, so a grandchild holding them would keep a finished command "running".
The leader's exit is watched with a pidfd where the OS has them, else with a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

from moot.sandbox.output import OutputCapture, Stream
from moot.sandbox.sentinel import descendants

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL."""
DRAIN = 1.0
"""Seconds to wait for the output pipes once the group is gone (a daemon that escaped the
group may hold them open; its later output is lost)."""
_CHUNK = 64 * 1024
_MAX_LEVELS = 16


class Spawned(Protocol):
    """A command another process started for this one (`GroupProcess`'s `spawn`)."""

    pid: int
    stdout: IO[bytes]
    stderr: IO[bytes]

    @property
    def returncode(self) -> int | None: ...

    def watch(self, on_exit: Callable[[int], None]) -> None:
        """Call `on_exit` with its exit status once it has ended (on the event loop)."""
        ...


class Spawn(Protocol):
    """Starts a command: its argv, where, its whole environment; its stdin is /dev/null, or
    the open descriptor `stdin` (a language server's pipe, `moot.lsp.piped`)."""

    def __call__(
        self, argv: list[str], cwd: Path, env: dict[str, str], stdin: int | None = None
    ) -> Spawned: ...


class GroupProcess:
    """A running command that leads its own process group; its output goes to a capture."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        capture: OutputCapture,
        wrapper: bool = False,
        pass_fds: Sequence[int] = (),
        spawn: Spawn | None = None,
    ) -> None:
        """Start `argv` now (call from the event loop's thread).

        Args:
            argv: The program and its arguments.
            cwd: Where it starts.
            env: Its whole environment.
            capture: Where its output goes.
            wrapper: The program only wraps the command (`bwrap`): a gentle stop goes to the
                processes below it, never to it (see `terminate`).
            pass_fds: Open file descriptors it inherits (`bwrap --bind-fd` names them); the
                caller closes its own copies.
            spawn: Starts it instead of `subprocess.Popen`, in a new session, stdin on
                /dev/null, stdout and stderr piped (Landlock's zygote); what it returns has
                `pid`, `stdout`, `stderr`, `returncode` and `watch(on_exit)`.

        Raises:
            OSError: It could not be started (no such program, no such directory).
        """
        self._loop = asyncio.get_running_loop()
        self._capture = capture
        self._proc: subprocess.Popen[bytes] | Spawned = (
            spawn(list(argv), cwd, dict(env))
            if spawn is not None
            else subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
        )
        self.pid = self._proc.pid
        self._wrapper = wrapper
        self.exited: asyncio.Future[int] = self._loop.create_future()
        """The leader's exit status (negative: killed by that signal)."""
        self._eof = asyncio.Event()
        self._open: dict[int, tuple[IO[bytes], Stream]] = {}
        for file, stream in ((self._proc.stdout, "stdout"), (self._proc.stderr, "stderr")):
            assert file is not None
            os.set_blocking(file.fileno(), False)
            self._open[file.fileno()] = (file, stream)  # type: ignore[assignment]
            self._loop.add_reader(file.fileno(), self._on_readable, file.fileno())
        self._watch_exit()

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def signal_group(self, sig: int) -> None:
        """Send `sig` to every process in the group; a group already gone is fine."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    async def terminate(self, grace: float) -> None:
        """SIGTERM, then after `grace` seconds (or once the leader is gone) `kill_all`.

        SIGTERM goes to the group, or for a wrapper to the processes below it: killing `bwrap`
        while it sets up can orphan its child before `--die-with-parent` is armed, leaving the
        command running outside any group (seen in about 5% of kills 2-4 ms after the start).
        (moot's own death there is the sentinel's to mend: `sentinel`.)
        """
        if grace > 0:
            if self._wrapper:
                _signal_all(descendants(self.pid), signal.SIGTERM)
            else:
                self.signal_group(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.exited), grace)
        self.kill_all()
        await asyncio.shield(self.exited)

    async def terminate_on_cancel(self, grace: float) -> None:
        """`terminate`, and `kill_all` at once should the caller be cancelled again meanwhile."""
        try:
            await asyncio.shield(self.terminate(grace))
        finally:
            if not self.exited.done():
                self.kill_all()

    def kill_all(self) -> None:
        """SIGKILL the group and every descendant of the leader, even those that left it.

        Everything is stopped (SIGSTOP) first, level by level, so nothing forks or escapes
        while the tree is walked; then all of it gets SIGKILL.
        """
        if self.exited.done():  # reaped: its children were handed to init; the group remains
            self.signal_group(signal.SIGKILL)
            return
        self.signal_group(signal.SIGSTOP)
        _wait_stopped(self.pid)
        frozen: set[int] = set()
        for _ in range(_MAX_LEVELS):
            found = descendants(self.pid) - frozen
            if not found:
                break
            _signal_all(found, signal.SIGSTOP)
            frozen |= found
        self.signal_group(signal.SIGKILL)
        _signal_all(frozen, signal.SIGKILL)

    async def drain(self, timeout: float = DRAIN) -> None:
        """Wait until both pipes are at end of file, at most `timeout` seconds; then close them."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._eof.wait(), timeout)
        self.close()

    def close(self) -> None:
        """Stop reading; what is unread is lost. Safe to call twice."""
        for fd in list(self._open):
            self._close_pipe(fd)

    def _on_readable(self, fd: int) -> None:
        _, stream = self._open[fd]
        try:
            data = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._capture.feed(stream, data)
        else:
            self._close_pipe(fd)

    def _close_pipe(self, fd: int) -> None:
        file, _ = self._open.pop(fd)
        self._loop.remove_reader(fd)
        file.close()
        if not self._open:
            self._eof.set()

    def _watch_exit(self) -> None:
        proc = self._proc
        if not isinstance(proc, subprocess.Popen):
            proc.watch(self._set_exit)
            return
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux 5.3+: a thread blocks in waitpid
            threading.Thread(target=self._wait_in_thread, args=(proc,), daemon=True).start()
            return

        def on_exit() -> None:
            self._loop.remove_reader(pidfd)
            os.close(pidfd)
            self._set_exit(proc.wait())

        self._loop.add_reader(pidfd, on_exit)

    def _wait_in_thread(self, proc: subprocess.Popen[bytes]) -> None:
        code = proc.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            self._loop.call_soon_threadsafe(self._set_exit, code)

    def _set_exit(self, code: int) -> None:
        if not self.exited.done():
            self.exited.set_result(code)


async def wait_for_end(process: GroupProcess, timeout: float, grace: float) -> int | None:
    """Wait for `process` to end, killing its group at the timeout or on cancellation.

    Returns:
        Its exit status, or None when the timeout killed it. Either way nothing of its group
        is left running and its output has been read.

    Raises:
        asyncio.CancelledError: After the group has been killed.
    """
    try:
        try:
            code: int | None = await asyncio.wait_for(asyncio.shield(process.exited), timeout)
        except TimeoutError:
            await process.terminate(grace)
            code = None
        else:
            process.signal_group(signal.SIGKILL)  # what the command left behind in its group
        await process.drain()
        return code
    except asyncio.CancelledError:
        try:
            await process.terminate_on_cancel(grace)
        finally:
            process.close()
        raise


def _signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_stopped(pid: int, limit: float = 0.05) -> None:
    """Wait (briefly, blocking) until `pid` is stopped, a zombie or gone."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                state = stat.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            return
        if state in (b"T", b"t", b"Z", b"X"):
            return
        time.sleep(0.0002)
