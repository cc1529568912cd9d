"""What the `lint` and `test` tools share: the tool object, its permission form, its result.

A `lint` or `test` call runs commands, so it is decided as the `bash` call of the command line
it would run (`VerifyTool.decided_as`, read by the approval step): deny rules about commands,
ask rules, allow rules such as `Bash(pytest:*)`, the modes and the prompt the person answers
all treat it exactly as the model's own `bash` call of that line. A project with nothing to
run is decided as a call that only reads (it runs nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from moot.tools.base import FunctionTool, SideEffect, ToolContext, ToolResult, call_scope
from moot.tools.verify_results import failures_text, render

DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 1800.0
NOTHING_FOUND = (
    "No {kind} command found in this project (looked at pyproject.toml, package.json, go.mod,"
    " Cargo.toml and the Makefile). Run it with bash, or ask the user to set `verify.{kind}`"
    " in .moot/settings.json."
)


class VerifyTool:
    """A `Tool` (`lint` or `test`) that says which `bash` call it is decided as.

    Args:
        tool: The function tool that runs (its name, spec and `invoke`).
        verifier: Finds the project's commands (`moot.tools.verify_run.Verifier`).
    """

    def __init__(self, tool: FunctionTool, verifier: Any) -> None:
        self._tool, self.verifier = tool, verifier
        self.name, self.description = tool.name, tool.description
        self.parameters, self.side_effect = tool.parameters, tool.side_effect

    def decided_as(
        self, arguments: Mapping[str, Any], scope: str = ""
    ) -> tuple[str, SideEffect, dict[str, Any]]:
        """The call as the permission seam decides it: `bash` running its command line
        (`scope`: see `moot.tools.base.decided_as`)."""
        line = self.verifier.command_line(arguments, scope)
        if not line:
            return self.name, SideEffect.READ_ONLY, dict(arguments)
        return "bash", SideEffect.RUNS_COMMANDS, {"command": line}

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool (see `FunctionTool.invoke`)."""
        return await self._tool.invoke(arguments, ctx)


async def run_checks(
    verifier: Any, arguments: dict[str, Any], timeout: float, ctx: ToolContext
) -> ToolResult:
    """Run the project's checks for a `lint` or `test` call and say what they found."""
    kind = verifier.kind
    if verifier.sandbox is None:
        return ToolResult.error(f"{kind} runs commands, which are refused: no sandbox.")
    try:
        refusal = verifier.refusal(arguments, call_scope(ctx.call_id, ctx.tool_call_id))
    except ValueError as exc:  # a path that reads as an option
        return ToolResult.error(str(exc))
    if refusal:
        return ToolResult.error(refusal)
    if not verifier.runners():
        return ToolResult.error(NOTHING_FOUND.format(kind=kind))
    try:
        scope = call_scope(ctx.call_id, ctx.tool_call_id)
        reports = await verifier.run(arguments, min(timeout, MAX_TIMEOUT), ctx.emit, scope)
    except OSError as exc:
        return ToolResult.error(f"Could not run the {kind} command: {exc}")
    display = {
        "reports": msgspec.to_builtins(reports),
        "ok": all(report.ok for report in reports),
        "failures": failures_text(kind, reports),
    }
    timed_out = any(report.exit_code is None for report in reports)
    return ToolResult(render(kind, reports), is_error=timed_out, display=display)
