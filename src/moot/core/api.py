"""The Python API: `run`, `async_run` and `stream` over one Runtime.

from moot import Agent, run
result = run("Summarise README.md", Agent("main", model="scripted:demo.yaml"))
print(result.output)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import msgspec

from moot.core.agent import Agent
from moot.core.gate import TurnGate
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import Attachment, Message, Usage
from moot.protocol.states import RunState, StopReason
from moot.store.base import Store
from moot.tools.base import Tool


class RunResult(msgspec.Struct, frozen=True):
    """What one run produced."""

    output: str
    """The first agent's answer (or what it had when the run stopped)."""
    state: RunState
    stop_reason: StopReason
    session_id: str
    messages: list[Message]
    """The first agent's conversation, as its model saw it."""
    events: list[ev.Event]
    """Every event of the run, in log order."""
    usage: Usage
    cost_usd: float
    turns: int


def _runtime(
    agents: Agent | Sequence[Agent],
    store: Store | None,
    session_id: str | None,
    tools: Sequence[Tool],
    limits: Limits | None,
    approval: ApprovalPolicy | None,
    gate: TurnGate | None,
) -> Runtime:
    from moot.store.memory import MemoryStore

    peers = [agents] if isinstance(agents, Agent) else list(agents)
    return Runtime(
        peers,
        store=store or MemoryStore(),
        session_id=session_id,
        tools=tools,
        limits=limits,
        approval=approval,
        gate=gate,
    )


async def stream(
    message: str,
    agents: Agent | Sequence[Agent],
    *,
    tools: Sequence[Tool] = (),
    limits: Limits | None = None,
    store: Store | None = None,
    session_id: str | None = None,
    approval: ApprovalPolicy | None = None,
    gate: TurnGate | None = None,
    attachments: Sequence[Attachment] = (),
) -> AsyncIterator[ev.Event]:
    """Run one turn and yield its events as they are stored; the last is `turn_finished`.

    Closing the iterator early interrupts the run.
    """
    runtime = _runtime(agents, store, session_id, tools, limits, approval, gate)
    events = runtime.events()
    runtime.submit(ops.UserTurn(text=message, attachments=tuple(attachments)))
    try:
        async for event in events:
            yield event
            if isinstance(event, ev.TurnFinished):
                break
    finally:
        runtime.submit(ops.Shutdown())
        await runtime.wait()


async def async_run(
    message: str,
    agents: Agent | Sequence[Agent],
    *,
    tools: Sequence[Tool] = (),
    limits: Limits | None = None,
    store: Store | None = None,
    session_id: str | None = None,
    approval: ApprovalPolicy | None = None,
    gate: TurnGate | None = None,
    attachments: Sequence[Attachment] = (),
) -> RunResult:
    """Run one turn of `message` to the first agent and return its result.

    Args:
        message: What the person says.
        agents: One agent or several peers; the first one gets the message.
        tools: Tools every agent has.
        limits: Bounds on the run (defaults: `Limits()`).
        store: Where to keep the log; an in-memory store when None.
        session_id: Continue this session of `store` (the agents remember it).
        approval: Settles tool approvals; everything is allowed when None.
        gate: Sees each completed model turn; may replace, retry or stop it.
        attachments: Images sent with the message.
    """
    runtime = _runtime(agents, store, session_id, tools, limits, approval, gate)
    events = runtime.events()
    runtime.submit(ops.UserTurn(text=message, attachments=tuple(attachments)))
    try:
        finished = await runtime.wait()
    finally:
        runtime.submit(ops.Shutdown())  # frees the session's claim, even when the run raised
    collected = [e async for e in events]
    assert finished is not None, "a run always ends with turn_finished"
    return RunResult(
        output=finished.output,
        state=finished.state,
        stop_reason=finished.stop_reason,
        session_id=runtime.session_id,
        messages=runtime.conversation(),
        events=collected,
        usage=finished.usage,
        cost_usd=finished.cost_usd,
        turns=finished.turns,
    )


def run(message: str, agents: Agent | Sequence[Agent], **options: object) -> RunResult:
    """`async_run` for code without an event loop; takes the same options."""
    return asyncio.run(async_run(message, agents, **options))  # type: ignore[arg-type]
