"""An ACP client playing an editor, for driving `moot acp` in tests through the ACP Python
SDK: it records updates, answers permission requests, reads and writes in-memory buffers
(falling back to the disk for reads) and runs terminals."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)


class Editor:
    """An ACP client playing an editor: it records every update and answers permission
    requests with `choose(options) -> option id | None` (None cancels)."""

    def __init__(self, choose: Callable[[list[Any]], str | None] | None = None) -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.reads: list[str] = []
        self.written: list[str] = []
        self.buffers: dict[str, str] = {}
        self.choose = choose or (lambda options: "once")
        self.hold: asyncio.Event | None = None
        """Set: questions wait for it before they are answered."""
        self.asking = asyncio.Event()
        """Set at each question."""
        self.terminals: list[list[str]] = []
        self.processes: dict[str, Any] = {}
        self.outputs: dict[str, str] = {}
        self.released: list[str] = []

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self.asking.set()
        if self.hold is not None:
            await self.hold.wait()
        chosen = self.choose(options)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def read_text_file(
        self, path: str, session_id: str, limit: int | None = None, line: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        return ReadTextFileResponse(content=on_disk(path))

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.written.append(path)
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self, command: str, session_id: str, args: list[str] | None = None,
        cwd: str | None = None, env: Any = None, output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> Any:  # fmt: skip
        from acp.schema import CreateTerminalResponse

        self.terminals.append([command, *(args or [])])
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env={e.name: e.value for e in env or []},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        terminal_id = f"term-{len(self.terminals)}"
        self.processes[terminal_id] = process
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        process = self.processes[terminal_id]
        self.outputs[terminal_id] = (await process.stdout.read()).decode()  # type: ignore[union-attr]
        return WaitForTerminalExitResponse(exit_code=await process.wait())

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        from acp.schema import TerminalExitStatus, TerminalOutputResponse

        code = self.processes[terminal_id].returncode
        return TerminalOutputResponse(
            output=self.outputs.get(terminal_id, ""),
            truncated=False,
            exit_status=TerminalExitStatus(exit_code=code),
        )

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.released.append(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.processes[terminal_id].kill()

    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def said(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind))

    def on_connect(self, conn: Any) -> None: ...

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None: ...


def on_disk(path: str) -> str:
    return Path(path).read_text()


@asynccontextmanager
async def agent(workspace: Path, editor: Editor, model: Path, *flags: str) -> AsyncIterator[Any]:
    keep = ("MOOT_HOME", "PATH", "HOME", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["MOOT_SANDBOX"] = "none"
    command = [sys.executable, "-m", "moot.cli", "acp", "--model", f"scripted:{model}", *flags]
    async with spawn_agent_process(editor, *command, env=env, cwd=workspace) as (conn, _):
        yield conn


def scripted(path: Path, *turns: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"turns": list(turns)}))
    return path


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}
