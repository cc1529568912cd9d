"""The `lint` tool: run the project's linters (ruff, eslint, go vet, clippy, `make lint`, or
the `verify.lint` setting) and read their findings (`moot.tools.verify_run`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from moot.tools.base import SideEffect, ToolContext, ToolResult, tool
from moot.tools.verify_run import Verifier
from moot.tools.verify_tool import DEFAULT_TIMEOUT, VerifyTool, run_checks

if TYPE_CHECKING:
    from moot.sandbox.base import Sandbox
    from moot.workspace.paths import Workspace

DESCRIPTION = (
    "Run the project's linters (found from its files: ruff, eslint, go vet, cargo clippy, a "
    "Makefile's lint target, or the verify.lint setting) in the sandbox and get their "
    "findings as path:line: code message. Run it after changing code, and fix what it finds "
    "before saying you are done. path: a file or directory (the whole project by default)."
)


def lint_tool(
    sandbox: Sandbox | None,
    workspace: Workspace,
    *,
    configured: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> VerifyTool:
    """The `lint` tool for one session (`configured`: the `verify.lint` setting's lines)."""
    verifier = Verifier("lint", sandbox, workspace, configured, env)

    @tool(name="lint", side_effect=SideEffect.RUNS_COMMANDS, description=DESCRIPTION)
    async def lint(
        ctx: ToolContext,
        path: Annotated[
            str | None, Field(description="A file or directory; the whole project if omitted")
        ] = None,
        timeout: Annotated[float, Field(gt=0, description="Seconds; at most 1800")] = (
            DEFAULT_TIMEOUT
        ),
    ) -> ToolResult:
        return await run_checks(verifier, {"path": path}, timeout, ctx)

    return VerifyTool(lint, verifier)
