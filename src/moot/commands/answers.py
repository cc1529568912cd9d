"""Waiting for what answers an op: the events that carry its submission id.

Commands submit ops (`RunTool`, `SetModel`) and show what answers them. The subscription is
taken before the op is submitted, so an answer the session records at once (an `op_refused`)
is never missed.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from moot.commands.registry import CommandError, RefusedBySession
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import Client


async def answer(client: Client, op: ops.Op, kinds: Collection[str]) -> ev.Event:
    """Submit `op` and return the first event of `kinds` (or `op_refused`) that answers it.

    Raises:
        CommandError: The session refused the op (the message is its reason), or its event
            stream ended first.
    """
    subscription = client.subscribe()
    try:
        try:
            submission = client.submit(op)
        except ValueError as exc:  # an op that does not fit its schema: nothing happened
            raise CommandError(str(exc)) from None
        async for event in subscription:
            if event.submission_id != submission:
                continue
            if isinstance(event, ev.OpRefused):
                raise RefusedBySession(event.reason)
            if event.kind in kinds:
                return event
    finally:
        subscription.close()
    raise CommandError("the session ended before it answered")


async def run_tool(
    client: Client, tool: str, arguments: dict[str, Any] | None = None
) -> ev.ToolRan:
    """Run one of the session's tools as the person (`RunTool`) and return its `tool_ran`.

    Raises:
        CommandError: The session has no such tool, or a deny rule forbids the call.
    """
    event = await answer(client, ops.RunTool(tool=tool, arguments=arguments or {}), ("tool_ran",))
    assert isinstance(event, ev.ToolRan)
    return event
