"""Peers: every agent sees the others and may call any of them, itself included.

Two built-in tools carry this: `call_agent(agent_name, message)` sends a forward message and
returns the callee's answer; `finish(message)` ends the agent's turn with that answer, exactly
as a plain-text reply with no tool calls would.
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.core.agent import Agent
from moot.providers.base import ToolSpec

PERSON = "user"
CALL_AGENT = "call_agent"
FINISH = "finish"


def system_prompt(agent: Agent, roster: Sequence[Agent], caller: str) -> str:
    """The agent's instructions, then who else takes part and who is asking."""
    lines = [agent.instructions.strip() or f"You are {agent.name}."]
    lines += ["", f"You are `{agent.name}`, one of these peers in a moot:"]
    lines.append(f"- {PERSON}: the person at the keyboard")
    for peer in roster:
        role = peer.role or "(no role given)"
        marker = " (you)" if peer.name == agent.name else ""
        lines.append(f"- {peer.name}{marker}: {role}")
    lines += [
        "",
        f"Call a peer with `{CALL_AGENT}`; several calls in one turn run at once.",
        "End your turn with a plain answer and no tool calls, or call `finish(message)`.",
        f"This message comes from `{caller}`.",
    ]
    return "\n".join(lines)


def call_agent_spec(roster: Sequence[Agent]) -> ToolSpec:
    return ToolSpec(
        name=CALL_AGENT,
        description="Send a message to a peer agent and wait for its answer.",
        parameters={
            "type": "object",
            "properties": {
                "agent_name": {"type": "string", "enum": [a.name for a in roster]},
                "message": {"type": "string", "description": "What the peer should do"},
            },
            "required": ["agent_name", "message"],
            "additionalProperties": False,
        },
    )


FINISH_SPEC = ToolSpec(
    name=FINISH,
    description="End your turn; `message` is your answer.",
    parameters={
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": False,
    },
)


def tagged(name: str, text: str) -> str:
    """A result labelled with the agent that produced it, for several results at once."""
    return f"[{name}]{text}[/{name}]"
