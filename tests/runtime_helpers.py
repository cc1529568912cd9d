"""Small helpers for driving a Runtime in tests (not a test module)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol.messages import Attachment
from moot.providers.scripted import ScriptedProvider
from moot.store.memory import MemoryStore
from moot.testing import drive_turn
from moot.tools.base import Tool


def call(tool_name: str, /, **arguments: object) -> dict[str, object]:
    """A scripted tool call."""
    return {"name": tool_name, "arguments": arguments}


def agent(name: str = "main", *turns: object, role: str = "", **kwargs: object) -> Agent:
    return Agent(name, role=role, model=ScriptedProvider(list(turns)), **kwargs)


async def run_turn(
    runtime: Runtime,
    text: str = "go",
    *,
    agent: str | None = None,
    attachments: tuple[Attachment, ...] = (),
) -> tuple[ev.TurnFinished, list[ev.Event]]:
    """Submit one turn, collect its events until turn_finished."""
    outcome = await drive_turn(runtime, text, agent=agent, attachments=attachments)
    return outcome.finished, outcome.events


def make_runtime(
    agents: Agent | Sequence[Agent],
    *,
    tools: Sequence[Tool] = (),
    limits: Limits | None = None,
    **kwargs: Any,
) -> Runtime:
    """A runtime on an in-memory store; `kwargs` are more `RuntimeOptions`."""
    peers = [agents] if isinstance(agents, Agent) else list(agents)
    options = RuntimeOptions(tools=tools, limits=limits, **kwargs)
    return Runtime(peers, store=MemoryStore(), options=options)


def kinds(events: Sequence[ev.Event], *, skip_states: bool = False) -> list[str]:
    out = []
    for e in events:
        if isinstance(e, ev.StateChanged):
            if not skip_states:
                out.append(f"->{e.to_state}")
        else:
            out.append(e.kind)
    return out


def of(events: Sequence[ev.Event], event_type: type) -> list:
    return [e for e in events if isinstance(e, event_type)]
