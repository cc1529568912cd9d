"""Plan mode's `exit_plan_mode` tool itself, with its pydantic argument model.

Loaded at the tool's first call (`moot.tools.exit_plan_mode` gives sessions its spec until
then), and by `scripts/gen-tool-specs`, which generates that spec from it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from moot.protocol.approval import EXIT_PLAN_MODE
from moot.protocol.modes import PermissionMode
from moot.tools.base import FunctionTool, SideEffect, ToolContext, ToolResult, tool

_WORKING_IN = {
    PermissionMode.DEFAULT: "file edits and commands still ask the person first",
    PermissionMode.ACCEPT_EDITS: "file edits in the workspace run without asking; commands ask",
    PermissionMode.DONT_ASK: "what is not allowed by a rule is refused without asking",
    PermissionMode.BYPASS_PERMISSIONS: "every tool runs without asking",
}


def build_exit_plan_mode() -> FunctionTool:
    """The real `exit_plan_mode` tool (its argument model built now) for `exit_plan_mode_tool`
    and for generating its spec."""

    @tool(
        name=EXIT_PLAN_MODE,
        side_effect=SideEffect.READ_ONLY,
        description=(
            "In plan mode, present your plan for the person to approve before you change "
            "anything. Send the whole plan as markdown: the steps, and the files you will "
            "change. If it is approved you may start; if not, you get their feedback."
        ),
    )
    def exit_plan_mode(
        plan: Annotated[str, Field(min_length=1, description="The plan, in markdown")],
        ctx: ToolContext,
    ) -> ToolResult:
        mode = PermissionMode(ctx.mode or PermissionMode.DEFAULT)
        if mode == PermissionMode.PLAN:
            # Approval switches the mode before the tool runs; still here means no approval
            # happened (a policy that never asks), so nothing may change yet.
            return ToolResult.error("The plan was not approved; you are still in plan mode.")
        # Outside plan mode the call needs no approval, so the words claim none.
        return ToolResult(
            f"You may carry out the plan now. Permission mode: {mode} "
            f"({_WORKING_IN.get(mode, 'tools are decided by the rules')}).",
            display={"plan": plan, "mode": str(mode)},
        )

    return exit_plan_mode
