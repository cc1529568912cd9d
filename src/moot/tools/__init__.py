"""Tools a model can call: the `Tool` seam, and `@tool` to make one from a plain function.

Importing this package brings in pydantic (for argument validation), so `import moot` does not
import it eagerly.
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
