"""The run the loop and resume benchmarks share: one agent that calls a trivial tool, step by step.

The model asks for `echo(n=k)` at its k-th turn; `n` changes every turn so neither the
repeated-call detector nor the no-progress window could stop the run (both are off anyway).
"""

from __future__ import annotations

from typing import Any

from moot import Agent, Limits, tool
from moot.providers.scripted import FunctionProvider, ModelFunction
from moot.tools.base import SideEffect

AGENT = "bench"

LIMITS = Limits(max_turns=None, no_progress_window=None, max_repeated_tool_calls=None)
"""No bound may end a long benchmark run early."""


@tool(side_effect=SideEffect.READ_ONLY)
def echo(n: int) -> int:
    """Return n."""
    return n


def echo_turn(k: int) -> dict[str, Any]:
    """The model turn that calls `echo(n=k)`."""
    return {"tool_calls": [{"name": "echo", "arguments": {"n": k}}]}


def agent(model: ModelFunction) -> Agent:
    """The benchmark agent, answered by `model`."""
    return Agent(AGENT, model=FunctionProvider(model))
