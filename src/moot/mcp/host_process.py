"""The host process from moot's side: start it, talk to it, end it (see `moot.mcp.wire`).

It is started with `python -P -m moot.mcp.host` (`-P`: the workspace must not shadow moot's
own modules, which `-m` would otherwise allow by putting the working directory first on
sys.path; not `-I`, which would also hide a `pip install --user` moot), in a session of its
own (the terminal's Ctrl-C is moot's to handle), with the session's environment. A host that
dies is started again at the next question, after a back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from moot.mcp import wire
from moot.paths import make_private_dir, private_opener

READ_LIMIT = 64 << 20
"""The longest line the host may send (a capped result is far below it)."""
CLOSE_TIMEOUT_S = 10.0
MAX_BACKOFF_S = 30.0
NICENESS = 10
"""The host's and its servers' scheduling priority: lower than moot's (background work)."""


class HostProcess:
    """One host process at a time, and the questions waiting for its answers.

    Args:
        setup: The host's first message.
        environ: The environment it (and the servers it starts) begins from.
        on_report: Told every server update.
        on_start: Called once a (new) host runs, to send it the servers to start.
        on_exit: Told why the host ended (unless moot ended it).
        on_elicit: Given each server's question (answered with `wire.ElicitAnswer`).
    """

    def __init__(
        self,
        setup: wire.Setup,
        environ: dict[str, str],
        *,
        on_report: Callable[[wire.ServerUpdate], None],
        on_start: Callable[[], None],
        on_exit: Callable[[str], None],
        on_elicit: Callable[[wire.Elicit], None] = lambda question: None,
    ) -> None:
        self.setup = setup
        self.environ = environ
        self._on_report, self._on_start, self._on_exit = on_report, on_start, on_exit
        self._on_elicit = on_elicit
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._spawning: asyncio.Task[bool] | None = None
        self._progress: dict[int, Callable[[str], None]] = {}
        self._pending: dict[int, asyncio.Future[wire.Report]] = {}
        self._next_id = 0
        self._failures = 0
        self._retry_at = 0.0
        self.closed = False

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    def spawn(self) -> asyncio.Task[bool]:
        """Start the host in the background (once at a time); the task says whether it runs."""
        if self._spawning is None or self._spawning.done():
            self._spawning = asyncio.get_running_loop().create_task(self._spawn())
        return self._spawning

    async def _spawn(self) -> bool:
        wait = self._retry_at - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        log_dir = Path(self.setup.log_dir)
        try:
            make_private_dir(log_dir)  # what servers print may hold tokens: this user's only
            # Once per host: not worth a thread.
            with open(log_dir / "host.stderr", "ab", opener=private_opener) as stderr:  # noqa: ASYNC230
                self._proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-P",
                    "-m",
                    "moot.mcp.host",
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=stderr,
                    start_new_session=True,
                    limit=READ_LIMIT,
                    env=self.environ,
                    cwd=self.setup.workspace,
                )
        except OSError as exc:
            self._failed(f"the MCP host could not start: {exc}")
            return False
        with contextlib.suppress(OSError):
            # Background work from its first instruction (the servers it starts inherit it): on
            # a small machine, its start must not take the CPU from moot's own first request.
            os.setpriority(os.PRIO_PROCESS, self._proc.pid, NICENESS)
        self._reader = asyncio.get_running_loop().create_task(self._read(self._proc))
        self.send(self.setup)
        self._on_start()
        return True

    def send(self, message: wire.Request) -> bool:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            return False
        try:
            proc.stdin.write(wire.encode(message))
        except (OSError, RuntimeError):
            return False
        return True

    async def ask(
        self,
        make: Callable[[int], wire.Request],
        limit: float,
        progress: Callable[[str], None] | None = None,
    ) -> wire.Report:
        """Send a question and wait for its answer (at most `limit` seconds); a `Failure`
        when the host cannot be reached. `progress` is given the server's progress lines."""
        if not self.running:
            if self.closed:
                return wire.Failure(id=0, message="the session is closing")
            if not await self.spawn():
                return wire.Failure(id=0, message="the MCP host did not start")
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[wire.Report] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        if progress is not None:
            self._progress[request_id] = progress
        if not self.send(make(request_id)):
            self._pending.pop(request_id, None)
            return wire.Failure(id=0, message="the MCP host is not running")
        try:
            return await asyncio.wait_for(future, limit)
        except TimeoutError:
            return wire.Failure(id=0, message=f"no answer from the MCP host in {limit:g} s")
        finally:
            self._pending.pop(request_id, None)
            self._progress.pop(request_id, None)

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        try:
            while line := await proc.stdout.readline():
                try:
                    report = wire.decode_report(line)
                except (msgspec.ValidationError, msgspec.DecodeError):
                    continue
                if isinstance(report, wire.ServerUpdate):
                    self._on_report(report)
                elif isinstance(report, wire.Elicit):
                    self._on_elicit(report)
                elif isinstance(report, wire.Progress):
                    if (shown := self._progress.get(report.id)) is not None:
                        shown(report.text)
                elif (future := self._pending.pop(report.id, None)) and not future.done():
                    future.set_result(report)
        except (ValueError, OSError):
            pass  # a line past the limit: the host is broken
        finally:
            await self._gone(proc)

    async def _gone(self, proc: asyncio.subprocess.Process) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5)
        if self._proc is proc:
            self._proc = None
        why = f"the MCP host process exited (code {proc.returncode})"
        for future in self._pending.values():
            if not future.done():
                future.set_result(wire.Failure(id=0, message=why))
        self._pending.clear()
        if not self.closed:
            self._failed(why)

    def _failed(self, why: str) -> None:
        self._failures += 1
        self._retry_at = time.monotonic() + min(2.0 ** (self._failures - 1), MAX_BACKOFF_S)
        self._on_exit(why)

    async def close(self, leftovers: Callable[[], None]) -> None:
        """Stop the host (bounded: one that lingers is killed, and `leftovers` ends what it
        may have left running)."""
        self.closed = True
        if self._spawning is not None and not self._spawning.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._spawning, CLOSE_TIMEOUT_S)
        proc = self._proc
        if proc is not None and proc.returncode is None:
            self.send(wire.Stop())
            with contextlib.suppress(Exception):
                if proc.stdin is not None:
                    proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), CLOSE_TIMEOUT_S)
            except TimeoutError:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                leftovers()
                await proc.wait()
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
