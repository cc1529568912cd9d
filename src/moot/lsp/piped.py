"""A language server started by a sandbox's own spawner (Landlock's zygote), with the three
stdio pipes a server talks over, seen as the asyncio process `LanguageServer` drives.

Landlock's commands are forked by its zygote (`moot.sandbox.landlock_zygote`), never by moot:
asyncio's subprocess API cannot start them. The zygote gives a command the descriptors it is
sent: here the read end of a pipe for stdin (the shell commands it runs get /dev/null), and
pipes for stdout and stderr; this module wraps them in asyncio streams.

Without a PID namespace, a server's helpers (tsserver is a child of
typescript-language-server) are ordinary processes of this machine: `kill` takes the
server's process group and every process below it, even one that left the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from moot.sandbox.process import Spawn, Spawned
from moot.sandbox.sentinel import descendants

_LIMIT = 1 << 24
"""Bytes a stream buffers at most (asyncio's subprocess default, 64 KiB, is less than one
workspace's diagnostics can be)."""


class PipedProcess:
    """A spawned server: `pid`, `stdin`, `stdout`, `stderr`, `returncode`, `wait`, `kill`."""

    def __init__(
        self,
        spawned: Spawned,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        stderr: asyncio.StreamReader,
    ) -> None:
        self._spawned = spawned
        self.pid = spawned.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = self._loop.create_future()
        spawned.watch(self._ended)
        self._pidfd: int | None = None
        with contextlib.suppress(OSError):  # gone already: the zygote says so
            self._pidfd = os.pidfd_open(self.pid)
            self._loop.add_reader(self._pidfd, self._gone)

    def _ended(self, status: int) -> None:
        if not self._exited.done():
            self._exited.set_result(status)
        self._close_pidfd()

    def _gone(self) -> None:
        """It exited: the zygote, which reaps it, says how, unless it was stopped first (the
        sandbox closed before its servers did); then it was killed, as far as moot knows."""
        self._close_pidfd()
        self._loop.call_later(1.0, self._ended, -signal.SIGKILL)

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    @property
    def returncode(self) -> int | None:
        if self._spawned.returncode is not None:
            return self._spawned.returncode
        return self._exited.result() if self._exited.done() else None

    async def wait(self) -> int:
        """Its exit status, once it has ended (the zygote reaps it)."""
        return await asyncio.shield(self._exited)

    def kill(self) -> None:
        """SIGKILL its group and every process below it."""
        below = descendants(self.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        for pid in {self.pid, *below}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


async def start_piped(
    spawn: Spawn, argv: list[str], cwd: Path, env: Mapping[str, str]
) -> PipedProcess:
    """Start `argv` with `spawn`, its stdin, stdout and stderr piped to this process.

    Raises:
        OSError: It could not start.
    """
    loop = asyncio.get_running_loop()
    stdin_read, stdin_write = os.pipe2(os.O_CLOEXEC)
    try:
        spawned = spawn(argv, cwd, dict(env), stdin=stdin_read)
    except BaseException:
        os.close(stdin_write)
        raise
    finally:
        os.close(stdin_read)
    try:
        stdout = await _reader(loop, spawned.stdout)
        stderr = await _reader(loop, spawned.stderr)
        writer = await _writer(loop, os.fdopen(stdin_write, "wb", buffering=0))
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(spawned.pid, signal.SIGKILL)
        raise
    return PipedProcess(spawned, writer, stdout, stderr)


async def _reader(loop: asyncio.AbstractEventLoop, file: IO[bytes]) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=_LIMIT, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), file)
    return reader


async def _writer(loop: asyncio.AbstractEventLoop, file: IO[bytes]) -> asyncio.StreamWriter:
    # A StreamReaderProtocol gives the writer its flow control (`drain`); it reads nothing.
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
    transport, _ = await loop.connect_write_pipe(lambda: protocol, file)
    return asyncio.StreamWriter(transport, protocol, None, loop)
