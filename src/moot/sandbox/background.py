"""Background commands: a local one's handle, and the session's registry of them all.

`LocalBackgroundProcess` is what the host and bubblewrap backends return from `start`: a
`GroupProcess` whose output collects until `read()` takes it (capped like a command's output,
the whole of it in a file once it passes the cap). `BackgroundShells` is the session's list of
background commands, whatever backend started them; the `bash`, `shell_output` and
`kill_shell` tools share one, and closing it at session end kills every command still running.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from moot.sandbox.base import BackgroundProcess
from moot.sandbox.output import MAX_OUTPUT_CHARS, HeadTail, OutputCapture, OutputDir
from moot.sandbox.process import KILL_GRACE, GroupProcess, Spawn


class LocalBackgroundProcess:
    """A command running in the background as a local process group."""

    def __init__(
        self,
        shell_id: str,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        files: OutputDir | None,
        limit: int = MAX_OUTPUT_CHARS,
        kill_grace: float = KILL_GRACE,
        wrapper: bool = False,
        pass_fds: Sequence[int] = (),
        spawn: Spawn | None = None,
        on_end: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """Start it now (from the event loop's thread); `wrapper` and `pass_fds` as for
        `GroupProcess`,
        and `spawn`; `on_end` is awaited once it has ended, before its exit code shows
        (the sandbox's sweep of set-id bits, `set_id.SetIdSweep`).

        Raises:
            OSError: It could not be started.
        """
        self.id = shell_id
        self._limit = limit
        self._grace = kill_grace
        self._unread = HeadTail(limit)
        self._capture = OutputCapture(files, name=shell_id, limit=limit, on_output=self._keep)
        self._process = GroupProcess(
            argv,
            cwd=cwd,
            env=env,
            capture=self._capture,
            wrapper=wrapper,
            pass_fds=pass_fds,
            spawn=spawn,
        )
        self._exit_code: int | None = None
        self._on_end = on_end
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    def read(self) -> str:
        """Output since the last read: capped, its middle elided and named in the marker."""
        text = self._unread.render(where=self._capture.where)
        self._unread = HeadTail(self._limit)
        return text

    @property
    def exit_code(self) -> int | None:
        """None while it runs; negative when a signal ended it (-15 SIGTERM, -9 SIGKILL)."""
        return self._exit_code

    async def kill(self) -> None:
        """SIGTERM to its group, SIGKILL after the grace period; returns once it is gone."""
        if self._exit_code is None:
            await self._process.terminate_on_cancel(self._grace)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._watcher)

    def _keep(self, text: str) -> None:
        self._unread.add(text)

    async def _watch(self) -> None:
        code = await self._process.exited
        self._process.signal_group(signal.SIGKILL)  # what it left behind goes with it
        await self._process.drain()
        self._capture.finish()
        if self._on_end is not None:
            await self._on_end()
        self._exit_code = code


class UnknownShell(LookupError):
    """No background shell has that id in this session."""


class BackgroundShells:
    """This session's background commands, by id; closing it kills those still running."""

    def __init__(self) -> None:
        self._shells: dict[str, tuple[BackgroundProcess, str]] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        """The session has ended: no more background shells."""
        return self._closed

    def add(self, process: BackgroundProcess, command: str) -> None:
        """Keep `process` (started for `command`) under its id.

        Raises:
            RuntimeError: The session has ended.
        """
        if self._closed:
            raise RuntimeError("the session has ended; no more background shells")
        self._shells[process.id] = (process, command)

    def get(self, shell_id: str) -> BackgroundProcess:
        """The shell with this id.

        Raises:
            UnknownShell: There is none; its message lists the ids there are.
        """
        try:
            return self._shells[shell_id][0]
        except KeyError:
            known = ", ".join(self._shells) or "none"
            raise UnknownShell(f"no background shell {shell_id!r} (shells: {known})") from None

    def command(self, shell_id: str) -> str:
        return self._shells[shell_id][1]

    def ids(self) -> list[str]:
        return list(self._shells)

    async def close(self) -> None:
        """Kill every background command still running; later `add`s are refused."""
        self._closed = True
        running = [p for p, _ in self._shells.values() if p.exit_code is None]
        await asyncio.gather(*(p.kill() for p in running), return_exceptions=True)
