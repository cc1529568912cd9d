"""`LazyTool`: a tool whose spec is known ahead and whose code is loaded at its first call.

Every model request carries every tool's name, description and schema, but no tool's code. A
built-in tool's spec is generated data (`builtin_specs.json`), so `moot -p` sends its first
request without importing the tools' modules or building their pydantic argument models; each
is built on its first call, and then kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moot.tools.base import SideEffect, Tool, ToolContext, ToolResult, decided_as


class LazyTool:
    """A `Tool` with a fixed spec that builds the real tool on its first `invoke`.

    Args:
        name: What the model calls it by.
        description: What it does, for the model.
        parameters: The JSON schema of its arguments, exactly what the built tool would give.
        side_effect: What running it can change.
        build: Makes the real tool; called at most once, on the first call.
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        side_effect: SideEffect,
        build: Callable[[], Tool],
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.side_effect = side_effect
        self._build: Callable[[], Tool] | None = build
        self._tool: Tool | None = None

    def __repr__(self) -> str:
        built = "built" if self._tool is not None else "not built"
        return f"LazyTool(name={self.name!r}, side_effect={self.side_effect.value!r}, {built})"

    @property
    def tool(self) -> Tool:
        """The real tool, built now if this is the first time it is needed."""
        if self._tool is None:
            assert self._build is not None
            self._tool, self._build = self._build(), None
        return self._tool

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Build the real tool if needed, then run it; never raises but `CancelledError`."""
        try:
            tool = self.tool
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            return ToolResult.error(f"Tool {self.name} failed: {detail}")
        return await tool.invoke(arguments, ctx)


class LazyCommandTool(LazyTool):
    """A `LazyTool` whose calls are decided as the command they run (`lint`, `test`): asking
    builds the tool, which works the command out (`moot.tools.base.decided_as`)."""

    def decided_as(
        self, arguments: dict[str, Any], scope: str = ""
    ) -> tuple[str, SideEffect, dict[str, Any]]:
        """The call as the permission seam decides it (the built tool's answer)."""
        return decided_as(self.tool, self.name, arguments, scope)
