"""Shell commands in the editor's terminal, when the person chooses it: a `Sandbox` that asks
the editor (`moot.protocol.editor.EditorTerminal`) instead of moot's sandbox.

The choice is the person's, per session, and can change at any time: each command goes where the
choice stands as it starts. Commands in the editor's terminal run on the host, uncontained; they
get the variables moot's own backends pass (`moot.sandbox.env.scrub_env`). Background commands
always run in moot's sandbox (the editor's terminal has no place for them).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from moot.protocol.editor import EditorTerminal
from moot.sandbox.base import BackgroundProcess, CommandResult, OutputCallback, Sandbox
from moot.sandbox.env import scrub_env

EDITOR_TERMINAL = "editor terminal"


class ChoosableShell:
    """moot's sandbox (`primary`, None: none works), or the editor's terminal when chosen."""

    def __init__(
        self, primary: Sandbox | None, terminal: EditorTerminal, env_names: tuple[str, ...] = ()
    ) -> None:
        """`env_names`: the variables commands get besides the ones every command gets
        (`SandboxPolicy.env_names`)."""
        self.primary = primary
        self.terminal = terminal
        self.env_names = env_names

    @property
    def name(self) -> str:
        if self.terminal.chosen:
            return EDITOR_TERMINAL
        return self.primary.name if self.primary is not None else "none"

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        if not self.terminal.chosen:
            if self.primary is None:
                raise OSError("no sandbox works here, and the editor's terminal is not chosen")
            return await self.primary.run(
                command, cwd=cwd, env=env, timeout=timeout, on_output=on_output
            )
        started = time.perf_counter()
        clean = scrub_env(env, named=self.env_names)
        ran = await self.terminal.run(command, cwd=str(cwd), env=clean, timeout=timeout)
        if on_output is not None and ran.output:
            on_output(ran.output)
        return CommandResult(
            exit_code=ran.exit_code,
            stdout=ran.output,
            stderr="",
            duration_ms=(time.perf_counter() - started) * 1000,
            backend=EDITOR_TERMINAL,
            truncated=ran.truncated,
            timed_out=ran.timed_out,
        )

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        if self.primary is None:
            raise OSError("background commands run only in moot's sandbox, and none works here")
        return await self.primary.start(command, cwd=cwd, env=env)

    async def close(self) -> None:
        if self.primary is not None:
            await self.primary.close()
