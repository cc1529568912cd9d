"""The `kill_shell` tool: stop a background shell and everything it started."""

from __future__ import annotations

from moot.sandbox.background import BackgroundShells, UnknownShell
from moot.tools.base import FunctionTool, SideEffect, ToolResult, tool
from moot.tools.shell_output import shell_report


def kill_shell_tool(shells: BackgroundShells) -> FunctionTool:
    """The `kill_shell` tool over the session's background shells."""

    @tool(
        name="kill_shell",
        side_effect=SideEffect.RUNS_COMMANDS,
        description="Stop a background shell and every process it started.",
    )
    async def kill_shell(shell_id: str) -> ToolResult:
        try:
            process = shells.get(shell_id)
        except UnknownShell as exc:
            return ToolResult.error(str(exc))
        if process.exit_code is not None:
            return shell_report(process, process.read())
        await process.kill()
        return shell_report(process, process.read())

    return kill_shell
