"""Plan mode's way out: the `exit_plan_mode(plan)` tool.

In plan mode the model explores with read-only tools and every change is refused (`decide`,
step 3). When it has a plan it calls `exit_plan_mode` with the plan as markdown; `decide` turns
that call into a plan approval whose preview is the plan. The person either approves, choosing
the mode to work in (`Approve(mode="acceptEdits")`; "default" when none is chosen), and the
runtime switches the session's mode and records `mode_changed`, or denies with feedback, which
the model reads as the tool's refusal and revises the plan. Only after the switch does the tool
itself run, so what it tells the model is the mode it now works in. Outside plan mode the tool
just runs and tells the model the mode it is in.

Like the built-in tools, its spec is generated data (`moot.tools.builtin_specs`) and the tool
itself, with its pydantic argument model, is built at its first call.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from moot.core.approval import EXIT_PLAN_MODE, RemembersApprovals
from moot.permissions.modes import PermissionMode
from moot.tools.base import FunctionTool, SideEffect, Tool, ToolContext, ToolResult, tool
from moot.tools.builtin_specs import load_specs
from moot.tools.lazy import LazyTool

_WORKING_IN = {
    PermissionMode.DEFAULT: "file edits and commands still ask the person first",
    PermissionMode.ACCEPT_EDITS: "file edits in the workspace run without asking; commands ask",
    PermissionMode.DONT_ASK: "what is not allowed by a rule is refused without asking",
    PermissionMode.BYPASS_PERMISSIONS: "every tool runs without asking",
}


def exit_plan_mode_tool(modes: RemembersApprovals) -> Tool:
    """The `exit_plan_mode` tool for sessions whose modes `modes` keeps: its spec from
    `builtin_specs.json`, the tool itself (`build_exit_plan_mode`) built at its first call."""
    spec = load_specs()[EXIT_PLAN_MODE]
    return LazyTool(
        EXIT_PLAN_MODE,
        spec["description"],
        spec["parameters"],
        SideEffect(spec["side_effect"]),
        lambda: build_exit_plan_mode(modes),
    )


def build_exit_plan_mode(modes: RemembersApprovals) -> FunctionTool:
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
        mode = PermissionMode(modes.mode(ctx.session_id))
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
