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

from moot.protocol.approval import EXIT_PLAN_MODE
from moot.tools.base import SideEffect, Tool
from moot.tools.builtin_specs import load_specs
from moot.tools.lazy import LazyTool


def exit_plan_mode_tool() -> Tool:
    """The `exit_plan_mode` tool: its spec from `builtin_specs.json`, the tool itself
    (`moot.tools.exit_plan_mode_tool`) built at its first call. It reads the session's mode from
    its `ToolContext`."""
    spec = load_specs()[EXIT_PLAN_MODE]
    return LazyTool(
        EXIT_PLAN_MODE,
        spec["description"],
        spec["parameters"],
        SideEffect(spec["side_effect"]),
        _build,
    )


def _build() -> Tool:
    # Imported at the first call: the tool's argument model needs pydantic, which `moot -p`
    # does not otherwise load before its first model request.
    from moot.tools.exit_plan_mode_tool import build_exit_plan_mode

    return build_exit_plan_mode()
