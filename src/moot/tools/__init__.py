"""Tools a model can call: the `Tool` seam, and `@tool` to make one from a plain function.

Pydantic (for argument validation) is imported when a `@tool` is first made, not with this
package: the built-in tools are specs until their first call (`tools/lazy.py`).
"""

from moot.tools.base import (
    FunctionTool,
    SideEffect,
    Tool,
    ToolContext,
    ToolResult,
    tool,
    tool_spec,
)

__all__ = [
    "FunctionTool",
    "SideEffect",
    "Tool",
    "ToolContext",
    "ToolResult",
    "tool",
    "tool_spec",
]
