"""moot's end of the Landlock zygote (`landlock_zygote`): start it, ask it for commands, hear
how they ended."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO

_MAX = 1 << 16
_ANSWER_WAIT = 30.0
"""Seconds to wait for the zygote to say a command started (it forks and execs: milliseconds)."""


class ZygoteCommand:
    """A command the zygote started: what `process.GroupProcess` needs of it."""

    def __init__(self, pid: int, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._on_exit: Callable[[int], None] | None = None

    def watch(self, on_exit: Callable[[int], None]) -> None:
        self._on_exit = on_exit
        if self.returncode is not None:
            on_exit(self.returncode)

    def ended(self, status: int) -> None:
        self.returncode = status
        if self._on_exit is not None:
            self._on_exit(status)


class Zygote:
    """The zygote of one sandbox: started on first use, stopped by `stop`."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._running: dict[int, ZygoteCommand] = {}

    def spawn(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        ruleset: int,
        program: bytes,
        stdin: int | None = None,
    ) -> ZygoteCommand:
        """Start `argv` under `ruleset` and the seccomp `program` (on the event loop's thread).

        `stdin` is its standard input (a pipe's end, which the caller still closes: a language
        server's); /dev/null when None.

        Raises:
            OSError: It could not start (the zygote's child says why), or the zygote is gone.
        """
        channel = self._ensure()
        out_read, out_write = os.pipe2(os.O_CLOEXEC)
        err_read, err_write = os.pipe2(os.O_CLOEXEC)
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        given = null if stdin is None else stdin
        request = {"argv": argv, "cwd": str(cwd), "env": env, "filter": program.hex()}
        try:
            socket.send_fds(
                channel, [json.dumps(request).encode()], [given, out_write, err_write, ruleset]
            )
            answer = self._answer(channel)
        except BaseException:
            os.close(out_read)
            os.close(err_read)
            raise
        finally:
            for fd in (null, out_write, err_write):
                os.close(fd)
        if "pid" not in answer:
            os.close(out_read)
            os.close(err_read)
            raise OSError(f"the Landlock zygote could not fork: {answer.get('error')}")
        # Files that outlive this call: `GroupProcess` reads them and closes them.
        stdout = open(out_read, "rb", buffering=0)  # noqa: SIM115
        stderr = open(err_read, "rb", buffering=0)  # noqa: SIM115
        command = ZygoteCommand(int(str(answer["pid"])), stdout, stderr)
        self._running[command.pid] = command
        return command

    def _ensure(self) -> socket.socket:
        loop = asyncio.get_running_loop()
        alive = self._process is not None and self._process.poll() is None
        if self._channel is not None and self._loop is loop and alive:
            return self._channel
        self.stop()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-P", "-m", "moot.sandbox.landlock_zygote", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # never onto the person's screen (the app's)
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # the person's ^C reaches moot, which stops it
            )
        finally:
            theirs.close()
        mine.setblocking(False)
        self._channel, self._loop = mine, loop
        loop.add_reader(mine.fileno(), self._on_message)
        return mine

    def _answer(self, channel: socket.socket) -> dict[str, object]:
        """The answer to the request just sent; what else comes first (ends) is dispatched."""
        while True:
            ready, _, _ = select.select([channel], [], [], _ANSWER_WAIT)
            if not ready:
                raise OSError("the Landlock zygote did not answer")
            try:
                data = channel.recv(_MAX)
            except BlockingIOError:
                continue
            if not data:
                raise OSError("the Landlock zygote is gone")
            message = json.loads(data)
            if "ended" in message:
                self._ended(message)
            else:
                return dict(message)

    def _on_message(self) -> None:
        channel = self._channel
        if channel is None:
            return
        while True:
            try:
                data = channel.recv(_MAX)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:  # the zygote died: what it ran can no longer be reaped by it
                self._gone()
                return
            message = json.loads(data)
            if "ended" in message:
                self._ended(message)

    def _ended(self, message: dict[str, int]) -> None:
        command = self._running.pop(int(message["ended"]), None)
        if command is not None:
            command.ended(int(message["status"]))

    def _gone(self) -> None:
        for command in list(self._running.values()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(command.pid, signal.SIGKILL)
            command.ended(-signal.SIGKILL)
        self._running.clear()
        self.stop()

    def stop(self) -> None:
        """Stop the zygote: it kills every process below it as its socket closes, and exits."""
        if self._channel is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(self._channel.fileno())
            self._channel.close()
            self._channel = None
        if self._process is not None:
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
