"""What the backends that confine a local process (bubblewrap, Landlock, Seatbelt) do around
every command alike.

A path no command may make (`SandboxPolicy.absent`: a `.git/hooks` script, a `.moot` that a
mount would hide) is swept away before each command starts and after it ends, even when it
was cancelled; a background command's start sweeps first too, and closing the sandbox sweeps
what background commands made. The network proxy (`policy.proxy`) closes with the sandbox.
Each backend keeps how its commands start (`ProcessSandbox.launch`) and what it made to hold
them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import msgspec

from moot.sandbox.base import BackgroundProcess, CommandResult, OutputCallback, sweep_absent
from moot.sandbox.host import ProcessSandbox


class ConfinedSandbox(ProcessSandbox):
    """A `ProcessSandbox` whose commands are confined: the sweep and the proxy (see the module
    docstring)."""

    async def run(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        on_output: OutputCallback | None = None,
    ) -> CommandResult:
        """Run `command` (see `ProcessSandbox.run`); what no command may make is swept away
        before and after it, and the result names what was (`CommandResult.swept`)."""
        before = await sweep_absent(self.policy)
        try:
            result = await super().run(
                command, cwd=cwd, env=env, timeout=timeout, on_output=on_output
            )
        finally:
            after = await asyncio.shield(sweep_absent(self.policy))
        swept = (*before, *after)
        return msgspec.structs.replace(result, swept=swept) if swept else result

    async def start(self, command: str, *, cwd: Path, env: Mapping[str, str]) -> BackgroundProcess:
        """Start `command` in the background (see `ProcessSandbox.start`), once what no command
        may make is swept away."""
        await sweep_absent(self.policy)
        return await super().start(command, cwd=cwd, env=env)

    async def close(self) -> None:
        """Kill background commands, stop the network proxy, and sweep away what the commands
        made that no command may make; a backend then removes what it made itself."""
        await super().close()
        if self.policy.proxy is not None:
            await self.policy.proxy.close()
        await sweep_absent(self.policy)
