"""Commands running in the Docker sandbox's container: one `docker exec` each, its output
pumped from a thread of its own to the event loop (`ContainerExec`), and the handle of one
started in the background (`DockerBackground`). What the exec runs, and how its tree is found
and signalled inside the container, is `docker_image`'s."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from moot.sandbox import docker_image
from moot.sandbox.env import scrub_env
from moot.sandbox.output import MAX_OUTPUT_CHARS, HeadTail, OutputCapture, OutputDir, Stream

if TYPE_CHECKING:
    from docker.models.containers import Container

Feed = Callable[..., None]
"""Takes output as it arrives: `feed(stream, data, final=False)`, as `OutputCapture.feed`."""


class DockerBackground:
    """A command started with `DockerSandbox.start`; its output collects until `read()`."""

    def __init__(
        self,
        shell_id: str,
        *,
        kill: Callable[[ContainerExec], Coroutine[Any, Any, None]],
        files: OutputDir | None,
        limit: int = MAX_OUTPUT_CHARS,
        on_end: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """`on_end` is awaited once the command has ended, before its exit code shows (the
        sandbox's sweep of set-id bits)."""
        self.id = shell_id
        self._kill = kill
        self._limit = limit
        self._unread = HeadTail(limit)
        self._capture = OutputCapture(files, name=shell_id, limit=limit, on_output=self._add)
        self._running: ContainerExec | None = None
        self._exit_code: int | None = None
        self._on_end = on_end
        self._follower: asyncio.Task[None] | None = None

    def attach(self, running: ContainerExec) -> None:
        """Follow `running` (the sandbox calls this once the exec has started)."""
        self._running = running
        self._follower = asyncio.get_running_loop().create_task(self._follow(running))

    def feed(self, stream: Stream, data: bytes, *, final: bool = False) -> None:
        """Take output as it arrives (the exec's pump calls this)."""
        self._capture.feed(stream, data, final=final)

    def read(self) -> str:
        """Output since the last read: capped, its middle elided and named in the marker."""
        text = self._unread.render(where=self._capture.where)
        self._unread = HeadTail(self._limit)
        return text

    @property
    def exit_code(self) -> int | None:
        """None while it runs; negative when our kill's signal ended it (-15, -9), and -1
        when the engine went away."""
        return self._exit_code

    async def kill(self) -> None:
        """SIGTERM to its tree, SIGKILL after the grace period; returns once it is gone."""
        if self._running is not None and self._exit_code is None:
            await self._kill(self._running)
        if self._follower is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._follower)

    def _add(self, text: str) -> None:
        self._unread.add(text)

    async def _follow(self, running: ContainerExec) -> None:
        await asyncio.shield(running.done)
        try:
            if self._on_end is not None:
                await self._on_end()
        finally:
            self._ended(running.done)

    def _ended(self, done: asyncio.Future[int | None]) -> None:
        self._capture.finish()
        code = done.result()
        if code is None:
            code = -1
        elif self._running is not None and self._running.killed and code > 128:
            code = 128 - code  # the shell reports a signal n as 128 + n
        self._exit_code = code


class ContainerExec:
    """One command running in the container; a thread pumps its output to the event loop."""

    def __init__(self, tag: str, loop: asyncio.AbstractEventLoop, feed: Feed) -> None:
        self.tag = tag
        """The value of the command's marker variable; see `docker_image`."""
        self.done: asyncio.Future[int | None] = loop.create_future()
        """The exit status docker reports, or None when the engine went away (see `lost`)."""
        self.killed = False
        """We signalled it before it ended."""
        self.lost: str | None = None
        """Why reading the output failed, when the engine went away."""
        self._loop = loop
        self._feed = feed
        self._stream: Any = None

    def begin(self, container: Container, argv: list[str], env: dict[str, str], cwd: str) -> None:
        """Create and start the exec, then pump its output from a thread (blocking call)."""
        api = container.client.api
        exec_id = api.exec_create(
            container.id, argv, stdout=True, stderr=True, stdin=False, environment=env, workdir=cwd
        )["Id"]
        if str(api.base_url).startswith("https://"):
            self._stream = TlsFrames(api.exec_start(exec_id, socket=True))
        else:
            self._stream = api.exec_start(exec_id, stream=True, demux=True)
        # A thread of its own, not the default executor: a background command may hold it
        # for hours, and the executor has only a few workers.
        pump = threading.Thread(
            target=self._pump, args=(api, exec_id), name=f"moot-docker-{self.tag}", daemon=True
        )
        pump.start()

    def abandon(self) -> None:
        """Stop reading output (from any thread); the pump then ends."""
        if self._stream is not None:
            self._stream.close()

    def _pump(self, api: Any, exec_id: str) -> None:
        code: int | None = None
        try:
            for out, err in self._stream:
                if out:
                    self._call(self._feed, "stdout", out)
                if err:
                    self._call(self._feed, "stderr", err)
            code = exit_code_of(api, exec_id)
        except Exception as error:
            self.lost = docker_image.first_line(error)
        finally:
            self._call(self._finish, code)

    def _call(self, callback: Callable[..., None], *args: Any) -> None:
        # A closed loop raises RuntimeError: nobody waits for this command any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(callback, *args)

    def _finish(self, code: int | None) -> None:
        self._feed("stdout", b"", final=True)
        self._feed("stderr", b"", final=True)
        if not self.done.done():
            self.done.set_result(code)


class TlsFrames:
    """An exec's output over TLS, as `(stdout, stderr)` pairs as each frame arrives.

    docker-py polls the socket before each read, and a TLS socket may hold decrypted bytes
    that no poll reports: output then waits for the next packet, perhaps the command's end
    (a remote engine's `echo ready; sleep 60` showed nothing for a minute). A blocking
    `recv` returns what the TLS layer holds first.
    """

    HEADER = 8
    """A frame's header: the stream (1 stdout, 2 stderr), three zero bytes, the length."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        sock.settimeout(None)  # a command may print nothing for hours

    def __iter__(self) -> Iterator[tuple[bytes | None, bytes | None]]:
        pending = bytearray()
        while chunk := self._recv():
            pending += chunk
            while len(pending) >= self.HEADER:
                length = int.from_bytes(pending[4:8], "big")
                if len(pending) < self.HEADER + length:
                    break
                data = bytes(pending[self.HEADER : self.HEADER + length])
                yield (None, data) if pending[0] == 2 else (data, None)
                del pending[: self.HEADER + length]

    def _recv(self) -> bytes:
        try:
            data: bytes = self._sock.recv(65536)
        except OSError:
            return b""  # closed: by `close`, or the engine went away
        return data

    def close(self) -> None:
        """Stop reading, from any thread: the read under way returns nothing."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._sock.close()


def container_env(env: Mapping[str, str], tag: str, named: tuple[str, ...]) -> dict[str, str]:
    """What `scrub_env` passes of `env` (and of the `named` variables), for the container: no
    PATH (the image's applies), HOME and TMPDIR on the tmpfs, and the marker that tells the
    command's processes apart."""
    extra = {"HOME": "/tmp", "TMPDIR": "/tmp", docker_image.MARKER: tag}
    clean = scrub_env(env, named=named, extra=extra)
    del clean["PATH"]  # the host's PATH names the host's directories
    return clean


def exit_code_of(api: Any, exec_id: str) -> int | None:
    """The exec's exit status, once it has one. The output can end a moment before the engine
    records the exit (a signal ended the process), or long before it (the command closed its
    stdout and stderr and runs on): ask until it has ended. A timeout still kills it."""
    pause = 0.002
    while (state := api.exec_inspect(exec_id)).get("Running"):
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
    code: int | None = state.get("ExitCode")
    return code


def container_gone(error: Exception) -> bool:
    import docker.errors  # loaded: the error came from docker-py

    if isinstance(error, docker.errors.NotFound):
        return True
    return isinstance(error, docker.errors.APIError) and error.status_code == 409


def exec_and_wait(container: Container, argv: list[str]) -> None:
    """Run `argv` in the container to its end; a vanished container is fine."""
    import docker.errors  # loaded: a container exists

    api = container.client.api
    # An APIError here means the container is gone, and every command with it.
    with contextlib.suppress(docker.errors.APIError):
        api.exec_start(api.exec_create(container.id, argv, stdout=True, stderr=True)["Id"])
