"""Events that make and end calls (a run begins with `turn_started`, a peer call with
`agent_called`), and the run-state machine's own (state changes, limits, errors)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from moot.protocol.events.base import EventBase
from moot.protocol.messages import AttachedFile, Attachment, Usage
from moot.protocol.modes import ModeName
from moot.protocol.states import RunState, StopReason

# ---- creation and ending of calls --------------------------------------------------------------


class TurnStarted(EventBase, tag="turn_started", frozen=True):
    """The person sent a message to an agent: a new run begins (its creation event)."""

    prompt: str
    attachments: tuple[Attachment, ...] = ()
    files: tuple[AttachedFile, ...] = ()
    """Workspace files the prompt names as `@path`, read as the run began: the model reads
    them with the prompt, and a resumed run folds the same text."""
    limits: dict[str, Any] = msgspec.field(default_factory=dict)
    """The limits in force for this run, as configured."""
    mode: ModeName | None = None
    """The session's permission mode as the run began (None: no modes); in plan mode the
    model is told so with the prompt."""
    starting_agents: tuple[str, ...] = ()
    """Several agents got the message at once (`UserTurn.agents`): the run's first call is
    then the person's own (`agent` is `user`, with no model), which calls each of them."""
    model: str = ""
    """The model the run's first agent answers with in this run only (`UserTurn.model`);
    empty: the agent's own."""
    pool: tuple[str, ...] = ()
    """The session's agents as the run began, the person's agent first: only these start or
    are called in it, and a resumed session goes on with them unless the front end names
    others. Empty in logs from before it was recorded."""


class AgentCalled(EventBase, tag="agent_called", frozen=True):
    """A forward message: one agent called another (the callee's call is created)."""

    caller: str
    message: str
    depth: int
    """1 for a call made by the person's first agent, 2 for one made by its callee, ..."""
    tool_call_id: str | None = None
    """The caller's `call_agent` tool call that carries this forward."""
    mode: ModeName | None = None
    """The session's permission mode as the call began (see `TurnStarted.mode`)."""
    with_history: bool = False
    """The callee sees its earlier exchange with this caller first (the run's history setting)."""
    background: bool = False
    """A background agent: its caller went on at once (its `call_agent` or
    `spawn_background_agent` result is the task id, which is this `call_id`); its return
    reaches the caller as a message at the caller's next step."""


class AgentReturned(EventBase, tag="agent_returned", frozen=True):
    """A return message: a called agent finished (terminal for its call)."""

    state: RunState
    stop_reason: StopReason
    output: str


class TurnFinished(EventBase, tag="turn_finished", frozen=True):
    """The person's turn ended (terminal for the run's first call)."""

    state: RunState
    stop_reason: StopReason
    output: str
    turns: int
    """Model turns taken across every call in the run."""
    usage: Usage
    cost_usd: float
    duration_ms: float


class AutoCommitted(EventBase, tag="auto_committed", frozen=True):
    """The files the turn changed were committed as moot's own commit (`moot undo` takes it
    back), as the turn ended."""

    sha: str
    subject: str
    files: tuple[str, ...] = ()
    note: str = ""
    """What the person should know about it (the repository's hooks did not run)."""


class RunResumed(EventBase, tag="run_resumed", frozen=True):
    """An unfinished run continues after a crash or a stop of the process."""

    interrupted_tool_calls: tuple[str, ...] = ()
    """Tool calls that had started without a recorded result; never re-run."""


# ---- the state machine ----------------------------------------------------------------------


class StateChanged(EventBase, tag="state_changed", frozen=True):
    """The call's run state moved along a legal transition."""

    from_state: RunState
    to_state: RunState


class LimitHit(EventBase, tag="limit_hit", frozen=True):
    """A limit was reached before the next model call or tool; the run stops."""

    stop_reason: StopReason
    detail: str


class Error(EventBase, tag="error", frozen=True):
    """Something went wrong that the run reports (a provider error, an internal bug)."""

    source: Literal["provider", "tool", "sandbox", "session", "internal"]
    """`sandbox`: a command tried what its sandbox forbids (a write outside, the network);
    `session`: what the session does around the run failed (an auto-commit), the run did not."""
    message: str
    retryable: bool = False
    model: str | None = None
    """The model that failed (a `provider` error); None for every other source."""
