"""What every call of one run shares: the log, the fold, agents, tools, providers, policies."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import msgspec
from msgspec.structs import replace

from moot.core.agent import Agent
from moot.core.approval import PendingApprovals
from moot.core.call_state import CallState
from moot.core.fold import INTERRUPTED, RunFold
from moot.core.limits import Limits
from moot.core.peers import (
    BUILTINS,
    agent_tools,
    calls_peers,
    offered_specs,
    offers_messages,
)
from moot.protocol import events as ev
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import ToolCall
from moot.protocol.modes import ModeName
from moot.protocol.states import StopReason
from moot.providers.base import Provider, ToolSpec
from moot.store.base import Store
from moot.store.errors import StoreError
from moot.tools.base import Tool

if TYPE_CHECKING:
    from moot.core.gate import TurnGate
    from moot.hooks.runner import Hooks

ResolveProvider = Callable[[Agent], Provider]
Publish = Callable[[ev.Event], None]
RecordSession = Callable[[ev.Event], ev.Event]
"""Stores a session event (one of `ev.SESSION_KINDS`), applies it to the session and
publishes it: `Runtime.record_session`."""


class TurnEnd(Protocol):
    """What a session does as each of the person's turns ends, before `turn_finished` (moot's
    auto-commit): the events it returns are recorded in the run, so every front end sees them."""

    def __call__(self, prompt: str) -> Sequence[ev.Event]:
        """Args:
        prompt: What the person asked in the turn that ends.
        """
        ...


class RunSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How every call of a session's runs works: the session's gate, hooks and turn end, and
    how its agents work together. `RuntimeOptions` holds these and the rest of a runtime's
    options; each run reads them from its `RunContext.settings`."""

    gate: TurnGate | None = None
    """Sees each completed model turn; may replace, retry or stop it. None (the default): no
    gate."""
    hooks: Hooks | None = None
    """Hook commands from the settings (`moot.hooks`); None (the default) runs none, at no
    cost."""
    turn_end: TurnEnd | None = None
    """What the session does as each turn ends, before `turn_finished` (moot's auto-commit);
    None (the default) does nothing."""
    allow_background_agents: bool = False
    """Agents may start background agents (`call_agent(..., background=true)`,
    `spawn_background_agent`), bounded by the run's budget and
    `Limits.max_background_agents`. Off by default."""
    peer_messages: bool = False
    """Someone listens for the agents' messages to the person (`on_message`,
    `run_background`): `send_message` and `get_messages` are offered even to a lone agent.
    They are offered anyway with background agents or more than one agent
    (`core.peers.offers_messages`); the person can `SendMessage` to a running agent either
    way. Off by default."""
    person_replies: bool = True
    """A front end can message running agents (`SendMessage`); False where none can
    (`moot -p`): an agent's `get_messages` then waits only while a peer or background agent
    could still send it something, never for the person. On by default."""
    disabled_tools: Collection[str] = ()
    """Built-in peer tools not offered (`finish` cannot be disabled). None by default."""
    pass_history: bool = False
    """An agent called again by the same caller (in this run or a later one of the session)
    sees their earlier exchange first; off (the default): each call starts afresh."""
    extra_instructions: str = ""
    """Added to the system prompt as ADDITIONAL INSTRUCTIONS (see `extra_scope`); none by
    default."""
    extra_scope: str = "entry"
    """Which calls read `extra_instructions`: `entry` (the default), the run's first call (the
    agents the person addressed); `all`, every call."""
    before_request: Callable[[], Awaitable[None]] | None = None
    """Awaited before every model request: what the request must not go without (a headless
    run's or an editor's MCP servers coming up, once: `client/mcp_ready.py`). None (the
    default): nothing waits."""


class CallEnded(Exception):
    """The call ends now with this outcome (a provider's failure, a gate's stop, a hook's
    refusal): raised by any step, caught by `CallRunner.drive`, which records the end."""

    def __init__(self, reason: StopReason, output: str = "") -> None:
        super().__init__(reason)
        self.reason, self.output = reason, output


class RunContext(msgspec.Struct):
    """What the calls of one run share, and the one way they record events."""

    store: Store
    session_id: str
    fold: RunFold
    agents: Mapping[str, Agent]
    tools: Mapping[str, Tool]
    """Tools every agent has."""
    provider_for: ResolveProvider
    approval: ApprovalPolicy
    pending: PendingApprovals
    publish: Publish
    record_session: RecordSession
    current_mode: Callable[[], ModeName | None]
    """The session's permission mode now (the runtime's session state owns it)."""
    settings: RunSettings = RunSettings()
    """The session's gate, hooks, turn end and peer settings, as every run reads them."""
    submission_id: str = ""
    """The op the run's events answer: the turn's, until an `Interrupt` ends it."""
    cancelled_by: dict[str, str] = {}
    """The `CancelAgent` that cancelled a peer call, by the call's id: what the call and its
    subtree record from then on (their ends) answers it, not the turn."""
    session_start: str | None = None
    """Run SessionStart hooks when the root call starts, with this source: startup or resume."""
    tasks: dict[str, asyncio.Task[object]] = {}
    """The running task of each peer call (background or waited for), by call id."""
    wakeups: dict[str, asyncio.Event] = {}
    """Set when a message or a background return reaches a call that may be waiting."""
    failure: StoreError | None = None
    """The store failed to append an event of this run (a full disk, a damaged file): the run
    records nothing more, and every call raises this on its way out, so the run ends with it
    (the log keeps the run open, for a resume once the store can be written again)."""
    _specs: dict[str, tuple[tuple[Tool, ...], tuple[ToolSpec, ...]]] = {}

    @property
    def limits(self) -> Limits:
        return self.fold.limits

    @property
    def talks(self) -> bool:
        """Whether this run's agents are offered `send_message` and `get_messages`."""
        settings = self.settings
        return offers_messages(
            len(self.agents),
            background=settings.allow_background_agents,
            messages=settings.peer_messages,
        )

    def record(self, call: CallState, event: ev.Event) -> ev.Event:
        """Append an event of `call`: store first, then the fold, then the front ends."""
        return self.record_as(
            replace(
                event, agent=call.agent, call_id=call.call_id, parent_call_id=call.parent_call_id
            )
        )

    def record_as(self, event: ev.Event) -> ev.Event:
        """Append an event whose agent and call ids are already set (a call's creation)."""
        run_id = self.fold.run_id or event.call_id  # a turn_started names its own run
        event = replace(
            event,
            session_id=self.session_id,
            run_id=run_id,
            submission_id=event.submission_id or self.answering(event.call_id),
        )
        if self.failure is not None:
            raise self.failure
        try:
            event = self.store.append(event)
        except StoreError as exc:
            self.failure = exc
            raise
        self.fold.apply(event)
        self.publish(event)
        if isinstance(event, ev.MessageSent) and event.to_call_id:
            self.wake(event.to_call_id)
        elif isinstance(event, ev.AgentReturned) and event.parent_call_id:
            self.wake(event.parent_call_id)
        return event

    def answering(self, call_id: str) -> str:
        """The op an event of call `call_id` answers: the `CancelAgent` that cancelled the
        call or a call above it, else the run's (`submission_id`)."""
        calls = self.fold.calls
        while self.cancelled_by and call_id:
            if (cancel := self.cancelled_by.get(call_id)) is not None:
                return cancel
            call = calls.get(call_id)
            call_id = (call.parent_call_id or "") if call is not None else ""
        return self.submission_id

    def wake(self, call_id: str) -> None:
        waiting = self.wakeups.get(call_id)
        if waiting is not None:
            waiting.set()

    def live_background(self) -> int:
        """Background agents of this run (and so of the session) that have not returned."""
        return sum(len(c.live_background) for c in self.fold.calls.values())

    def mode(self) -> ModeName | None:
        """The session's permission mode now; None when the session has no modes."""
        return self.current_mode()

    def record_interrupted(self, call: CallState, tool_call: ToolCall) -> None:
        """Give a tool call that started but never finished its result: unknown, not re-run."""
        self.record(
            call,
            ev.ToolFinished(
                tool_call_id=tool_call.id,
                tool=tool_call.name,
                content=INTERRUPTED,
                is_error=True,
                interrupted=True,
            ),
        )

    def tools_for(self, agent: Agent) -> dict[str, Tool]:
        return agent_tools(agent, self.tools)

    def calls_peers(self, agent: Agent) -> bool:
        """Whether `agent` may `call_agent` (an agent given a list of tools needs it listed)."""
        return calls_peers(agent)

    def specs_for(self, agent: Agent) -> tuple[ToolSpec, ...]:
        """The tools the model of `agent` is offered (`peers.offered_specs`), computed again
        only when its tools change (an MCP server's tools arrive, a deferred tool is loaded)."""
        tools = self.tools_for(agent)
        key = tuple(t for t in tools.values() if not getattr(t, "deferred", False))
        # Tools compare by identity: a replaced tool is a new one.
        cached = self._specs.get(agent.name)
        if cached is None or cached[0] != key:
            specs = offered_specs(
                agent,
                tools,
                list(self.agents.values()),
                background=self.settings.allow_background_agents,
                talks=self.talks,
                disabled=self.settings.disabled_tools,
            )
            cached = self._specs[agent.name] = (key, specs)
        return cached[1]

    def offers(self, agent: Agent, name: str) -> bool:
        """Whether the built-in `name` is one this agent's model may call in this run."""
        if name not in BUILTINS or name in self.tools_for(agent):
            return False
        return any(s.name == name for s in self.specs_for(agent))
