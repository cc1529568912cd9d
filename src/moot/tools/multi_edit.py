"""The `multi_edit` tool: several exact replacements in one file, all or none.

Each edit applies to the text the ones before it left; if any fails, nothing is written and
the error names which edit. Otherwise as `edit`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from moot.tools.base import FunctionTool, SideEffect, ToolContext, ToolResult, tool
from moot.tools.edit import edit_file
from moot.tools.write import OUTSIDE_A_RUN
from moot.workspace.paths import Workspace


class Edit(BaseModel):
    """One replacement."""

    old: str
    """Exact text to replace; unique unless replace_all."""
    new: str
    """The text to put there."""
    replace_all: bool = False
    """Replace every match."""


def multi_edit_tool(workspace: Workspace) -> FunctionTool:
    """The `multi_edit` tool, bound to `workspace` and its ledger."""

    @tool(
        name="multi_edit",
        side_effect=SideEffect.WRITES_WORKSPACE,
        description="Apply several edits to one file in order; all succeed or none apply.",
    )
    def multi_edit(
        path: str,
        edits: Annotated[list[Edit], Field(min_length=1)],
        ctx: ToolContext = OUTSIDE_A_RUN,
    ) -> ToolResult:
        return edit_file(workspace, path, edits, run_id=ctx.run_id)

    return multi_edit
