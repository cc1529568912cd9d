"""The shell tools of a session: `bash`, `shell_output` and `kill_shell`, sharing its shells."""

from __future__ import annotations

from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import Sandbox
from moot.sandbox.select import HOW_TO_ENABLE
from moot.tools.base import Tool
from moot.tools.bash import bash_tool
from moot.tools.kill_shell import kill_shell_tool
from moot.tools.shell_output import shell_output_tool
from moot.workspace.paths import Workspace


def shell_tools(
    sandbox: Sandbox | None,
    workspace: Workspace,
    shells: BackgroundShells,
    *,
    unavailable: str = HOW_TO_ENABLE,
) -> list[Tool]:
    """bash, shell_output and kill_shell for one session.

    Args:
        sandbox: Where commands run (`select_sandbox`); None refuses them with `unavailable`.
        workspace: Where commands start.
        shells: The session's background shells; close it (and the sandbox) at session end.
        unavailable: Why there is no sandbox and how to get one (`SandboxChoice.describe()`).

    Returns:
        The tools, read-only one first.
    """
    return [
        shell_output_tool(shells),
        bash_tool(sandbox, workspace, shells, unavailable=unavailable),
        kill_shell_tool(shells),
    ]
