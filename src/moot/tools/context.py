"""`ToolContext`: where a tool call happens, as the runtime tells a tool that asks for it.

Its own module so that `moot.tools.schema`, which leaves such parameters out of a tool's
schema, need not import the tool base that uses the schema.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec


def _discard(text: str) -> None:
    """Default `emit`: a tool invoked outside the runtime (tests, scripts) streams nowhere."""


class ToolContext(msgspec.Struct, frozen=True):
    """Where a call happens, passed by the runtime to any parameter annotated `ToolContext`."""

    session_id: str
    run_id: str
    call_id: str
    """The agent call the tool runs in (not the model's tool call; see `tool_call_id`)."""
    agent: str
    """The name of the agent that asked for the call."""
    tool_call_id: str
    """The provider's id for this tool call."""
    mode: str | None = None
    """The session's permission mode as the tool runs (None: the session has no modes)."""
    emit: Callable[[str], None] = _discard
    """Streams partial output to front ends. Sync tools call it from a worker thread, so the
    runtime's implementation must be thread-safe (e.g. `loop.call_soon_threadsafe`)."""


OUTSIDE_A_RUN = ToolContext(session_id="", run_id="", call_id="", agent="", tool_call_id="")
"""The context of a tool called directly (tests, scripts): no run, so no file snapshot, and no
session whose rules a redirect could be put to."""
