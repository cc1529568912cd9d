"""moot: a terminal coding agent on an embedded, event-sourced runtime.

The public API is imported lazily: `import moot` stays fast (the CLI's start-up depends on it),
and the runtime loads only when something here is first used.
"""

from __future__ import annotations

from moot._version import __version__

# Not `from typing import TYPE_CHECKING`: typing costs milliseconds of every `moot --version`.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from moot.core.agent import Agent
    from moot.core.api import (
        BackgroundRun,
        RunOptions,
        RunResult,
        async_run,
        format_trace,
        get_agent_status,
        run,
        run_background,
        send_message,
        stream,
    )
    from moot.core.gate import GateDecision, ModelTurn
    from moot.core.limits import Limits
    from moot.core.options import RuntimeOptions
    from moot.core.runtime import Runtime
    from moot.providers.scripted import FunctionProvider, ScriptedProvider
    from moot.tools.base import Tool, ToolContext, ToolResult, tool

_EXPORTS = {
    "Agent": "moot.core.agent",
    "RunResult": "moot.core.api",
    "RunOptions": "moot.core.api",
    "BackgroundRun": "moot.core.api",
    "format_trace": "moot.core.api",
    "run_background": "moot.core.api",
    "send_message": "moot.core.api",
    "get_agent_status": "moot.core.api",
    "async_run": "moot.core.api",
    "run": "moot.core.api",
    "stream": "moot.core.api",
    "GateDecision": "moot.core.gate",
    "ModelTurn": "moot.core.gate",
    "Limits": "moot.core.limits",
    "Runtime": "moot.core.runtime",
    "RuntimeOptions": "moot.core.options",
    "FunctionProvider": "moot.providers.scripted",
    "ScriptedProvider": "moot.providers.scripted",
    "Tool": "moot.tools.base",
    "ToolContext": "moot.tools.base",
    "ToolResult": "moot.tools.base",
    "tool": "moot.tools.base",
}

__all__ = [
    "Agent",
    "BackgroundRun",
    "FunctionProvider",
    "GateDecision",
    "Limits",
    "ModelTurn",
    "RunOptions",
    "RunResult",
    "Runtime",
    "RuntimeOptions",
    "ScriptedProvider",
    "Tool",
    "ToolContext",
    "ToolResult",
    "__version__",
    "async_run",
    "format_trace",
    "get_agent_status",
    "run",
    "run_background",
    "send_message",
    "stream",
    "tool",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'moot' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
