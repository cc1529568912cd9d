"""Peers: every agent sees the others and may call any of them, itself included.

Built-in tools carry this: `call_agent(agent_name, message)` sends a forward message and
returns the callee's answer; `finish(message)` ends the agent's turn with that answer, exactly
as a plain-text reply with no tool calls would; `send_message(task_id, message)` and
`get_messages()` talk to peers (and the person) while they run. A run that allows background
agents also offers `call_agent(..., background=true)` and `spawn_background_agent`: the
caller goes on at once with a task id, and the callee's return arrives as a message.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from moot.core.agent import Agent
from moot.providers.base import ToolSpec
from moot.tools.base import Tool, tool_spec

PERSON = "user"
CALL_AGENT = "call_agent"
FINISH = "finish"
SPAWN = "spawn_background_agent"
SEND_MESSAGE = "send_message"
GET_MESSAGES = "get_messages"
BUILTINS = frozenset({CALL_AGENT, FINISH, SPAWN, SEND_MESSAGE, GET_MESSAGES})
PEER_CALLS = frozenset({CALL_AGENT, SPAWN})
"""Tools that start a peer's call: a resume drives the callee on, never interrupts them."""


def offers_messages(roster_size: int, *, background: bool, messages: bool) -> bool:
    """Whether agents are offered `send_message` and `get_messages`: whenever someone could
    read or answer their messages. That is a run with background agents (their returns and
    news travel as messages), one whose person listens (`messages`: `on_message`,
    `run_background`), or a roster of more than one agent (a callee can tell its caller how
    far it got, a peer can wait for another's word).

    A lone agent in an ordinary session is not offered them, where the seed offers them
    always: only the person could read its messages, and the person reads its answer as it
    streams and answers with the next turn (the person can still message it mid-turn with
    `/msg`; it reads that unasked). Two schemas fewer in every request of the commonest
    session. `disabled_tools` takes them away from any run."""
    return background or messages or roster_size > 1


def system_prompt(
    agent: Agent,
    roster: Sequence[Agent],
    caller: str,
    *,
    task_id: str = "",
    caller_task: str = "",
    extra: str = "",
    talks: bool = False,
) -> str:
    """The agent's instructions, then who else takes part and who is asking.

    With `talks` (the agent is offered `send_message`), `task_id` is this call's id and
    `caller_task` its caller's (the person: `user`), so that the agent can message whoever
    asked. A call of the person's own (no `task_id`) is told only that `user` reaches the
    person: its prompt then stays the same from turn to turn, as a provider's prompt cache
    needs. `extra` is the run's extra instructions."""
    lines = [agent.instructions.strip() or f"You are {agent.name}."]
    if extra.strip():
        lines += ["", "ADDITIONAL INSTRUCTIONS:", extra.strip()]
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
    if talks and task_id:
        lines.append(
            f"Your task id is `{task_id}`; your caller's is `{caller_task or PERSON}` "
            f"(`{SEND_MESSAGE}` reaches it while you work)."
        )
    elif talks:
        lines.append(f"`{SEND_MESSAGE}` to `{PERSON}` reaches the person while you work.")
    return "\n".join(lines)


def call_agent_spec(roster: Sequence[Agent], *, background: bool = False) -> ToolSpec:
    properties: dict[str, object] = {
        "agent_name": {"type": "string", "enum": [a.name for a in roster]},
        "message": {"type": "string", "description": "What the peer should do"},
    }
    description = "Send a message to a peer agent and wait for its answer."
    if background:
        properties["background"] = {
            "type": "boolean",
            "description": "Do not wait: get a task id now, the answer later as a message",
        }
        description += " With background=true, go on at once; its answer arrives as a message."
    return ToolSpec(
        name=CALL_AGENT,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": ["agent_name", "message"],
            "additionalProperties": False,
        },
    )


def spawn_spec(roster: Sequence[Agent]) -> ToolSpec:
    return ToolSpec(
        name=SPAWN,
        description=(
            "Start a peer agent in the background and go on at once: returns its task id; "
            "its answer arrives as a message at one of your next steps."
        ),
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


SEND_MESSAGE_SPEC = ToolSpec(
    name=SEND_MESSAGE,
    description=(
        "Send a message to a running agent (its task id, or its name) or to the person "
        "(`user`); it reads it at its next step. You do not wait for an answer."
    ),
    parameters={
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": "A task id, an agent name, or `user`"},
            "message": {"type": "string"},
        },
        "required": ["task_id", "message"],
        "additionalProperties": False,
    },
)

MAX_WAIT_S = 300.0
"""The longest `get_messages` waits for a message, whatever it asks."""

GET_MESSAGES_SPEC = ToolSpec(
    name=GET_MESSAGES,
    description=(
        "The messages you have received so far in this task (they also arrive unasked, at "
        "your next step). With wait_seconds, first wait that long at most for a new one: to "
        "hear back from the person or a peer you messaged, or from a background agent."
    ),
    parameters={
        "type": "object",
        "properties": {
            "wait_seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": MAX_WAIT_S,
                "description": "Wait at most this long for a new message (0: do not wait)",
            }
        },
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
    """A result labelled with the agent that produced it: every `call_agent` result, one call
    or several, and the person's answer when several agents started."""
    return f"[{name}]{text}[/{name}]"


def agent_tools(agent: Agent, shared: Mapping[str, Tool]) -> dict[str, Tool]:
    """The tools `agent` may call: the run's shared tools (only those it is given, if it was
    given a list) and its own, which win over a shared tool of the same name."""
    if agent.given_tools is not None:
        shared = {name: t for name, t in shared.items() if name in agent.given_tools}
    return {**shared, **{t.name: t for t in agent.tools}}


def calls_peers(agent: Agent) -> bool:
    """Whether `agent` may `call_agent` (an agent given a list of tools needs it listed)."""
    return agent.given_tools is None or CALL_AGENT in agent.given_tools


def offered_specs(
    agent: Agent,
    tools: Mapping[str, Tool],
    roster: Sequence[Agent],
    *,
    background: bool,
    talks: bool,
    disabled: Collection[str] = (),
) -> tuple[ToolSpec, ...]:
    """The tool schemas `agent`'s model is offered: its tools (`agent_tools`; one whose
    `deferred` is true is callable but not offered, its schema loads on demand), then the
    peer tools it may use, then `finish`. The one rule for a request and for `/context`.

    A peer tool is left out when it is disabled, when one of the agent's tools has its name
    (that tool wins), or when the agent was given a list of tools that does not name it."""
    own = [ToolSpec(**tool_spec(t)) for t in tools.values() if not getattr(t, "deferred", False)]
    off = set(disabled) | {s.name for s in own}
    peers: list[ToolSpec] = []
    if calls_peers(agent):
        peers.append(call_agent_spec(roster, background=background))
        if background:
            peers.append(spawn_spec(roster))
    if talks:
        given = agent.given_tools
        peers += [
            s for s in (SEND_MESSAGE_SPEC, GET_MESSAGES_SPEC) if given is None or s.name in given
        ]
    peers = [s for s in peers if s.name not in off]
    if FINISH_SPEC.name not in {s.name for s in own}:
        peers.append(FINISH_SPEC)
    return (*own, *peers)
