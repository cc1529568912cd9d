"""The editor's files, through ACP's `fs/read_text_file` and `fs/write_text_file`:
`EditorBuffers` for the file tools."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

READ_TIMEOUT_S = 5.0
WRITE_TIMEOUT_S = 10.0


class EditorFiles:
    """Reads a file as the editor holds it (`moot.protocol.editor.EditorBuffers`).

    `read` runs in a worker thread; the request goes to the editor on the session's event
    loop, and the thread waits for it (bounded). On that loop's own thread it never waits.
    """

    def __init__(self, conn: Any, loop: asyncio.AbstractEventLoop, *, writes: bool) -> None:
        self.conn = conn
        self.loop = loop
        self.session_id = ""
        self.writes = writes
        """The editor offered `fs/write_text_file`: the edit tools write through it."""
        self._loop_thread = threading.get_ident()

    def read_text(self, path: str) -> str | None:
        if not self.session_id or threading.get_ident() == self._loop_thread:
            return None
        request = self.conn.read_text_file(session_id=self.session_id, path=path)
        future = asyncio.run_coroutine_threadsafe(request, self.loop)
        try:
            response = future.result(READ_TIMEOUT_S)
        except Exception:  # the editor did not answer: moot reads the disk
            future.cancel()
            return None
        content = getattr(response, "content", None)
        return content if isinstance(content, str) else None

    def write_text(self, path: str, text: str) -> None:
        if not self.writes or not self.session_id or threading.get_ident() == self._loop_thread:
            raise OSError(f"{path}: the editor cannot take this write")
        request = self.conn.write_text_file(session_id=self.session_id, path=path, content=text)
        future = asyncio.run_coroutine_threadsafe(request, self.loop)
        try:
            future.result(WRITE_TIMEOUT_S)
        except Exception as exc:
            future.cancel()
            message = f"{path}: the editor did not take the write"
            raise OSError(f"{message} ({exc or 'no answer'})") from None


OUTPUT_LIMIT = 1 << 20
"""The most output the editor keeps for moot of one command (bytes)."""


class EditorShell:
    """The editor's terminal for shell commands (`moot.protocol.editor.EditorTerminal`), used
    when the person picks it in the session's `shell` option. The terminal is shown in the tool
    call while the command runs.
    """

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.session_id = ""
        self.chosen = False
        self.show: Any = None
        """Called with each terminal's id, to show it in the running tool call."""

    async def run(self, command: str, *, cwd: str, env: Any, timeout: float) -> Any:
        from moot.protocol.editor import TerminalRun

        try:
            created = await self.conn.create_terminal(
                session_id=self.session_id,
                command="/bin/sh",
                args=["-c", command],
                cwd=cwd,
                env=[{"name": k, "value": v} for k, v in env.items()],
                output_byte_limit=OUTPUT_LIMIT,
            )
        except Exception as exc:
            raise OSError(f"the editor could not open a terminal: {exc}") from None
        terminal = created.terminal_id
        if self.show is not None:
            await self.show(terminal)
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await self.conn.wait_for_terminal_exit(
                        session_id=self.session_id, terminal_id=terminal
                    )
            except TimeoutError:
                timed_out = True
                await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal)
            output = await self.conn.terminal_output(
                session_id=self.session_id, terminal_id=terminal
            )
        finally:
            await self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal)
        status = output.exit_status
        code = status.exit_code if status is not None and not timed_out else None
        return TerminalRun(
            exit_code=code, output=output.output, truncated=output.truncated, timed_out=timed_out
        )
