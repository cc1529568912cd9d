"""What every call of one run shares: the log, the fold, agents, tools, providers, policies."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from moot.core.agent import Agent
from moot.core.approval import ApprovalPolicy, PendingApprovals, RemembersApprovals
from moot.core.fold import INTERRUPTED, CallState, RunFold
from moot.core.limits import Limits
from moot.core.peers import CALL_AGENT, FINISH, FINISH_SPEC, call_agent_spec
from moot.protocol import events as ev
from moot.protocol.messages import ToolCall
from moot.protocol.modes import ModeName
from moot.providers.base import Provider, ToolSpec
from moot.store.base import Store
from moot.tools.base import Tool, tool_spec

if TYPE_CHECKING:
    from moot.core.gate import TurnGate
    from moot.hooks.runner import Hooks

ResolveProvider = Callable[[Agent], Provider]
Publish = Callable[[ev.Event], None]


class RunContext(msgspec.Struct):
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
    gate: TurnGate | None = None
    hooks: Hooks | None = None
    """Hook commands from the settings; None runs none, at no cost."""
    session_start: str | None = None
    """Run SessionStart hooks when the root call starts, with this source: startup or resume."""
    _specs: dict[str, tuple[ToolSpec, ...]] = {}

    @property
    def limits(self) -> Limits:
        return self.fold.limits

    def record(self, call: CallState, event_type: type[ev.Event], **fields: Any) -> ev.Event:
        """Append an event for `call`: store first, then the fold, then the front ends."""
        return self.record_as(
            event_type,
            agent=call.agent,
            call_id=call.call_id,
            parent_call_id=call.parent_call_id,
            **fields,
        )

    def record_as(self, event_type: type[ev.Event], **fields: Any) -> ev.Event:
        run_id = self.fold.run_id or fields["call_id"]  # a turn_started names its own run
        event = self.store.append(event_type(session_id=self.session_id, run_id=run_id, **fields))
        self.fold.apply(event)
        self.publish(event)
        return event

    def mode(self) -> ModeName | None:
        """The session's permission mode now; None when the approval policy has no modes."""
        approval = self.approval
        if isinstance(approval, RemembersApprovals):
            return approval.mode(self.session_id)
        return None

    def record_session(self, event_type: type[ev.Event], **fields: Any) -> ev.Event:
        """Append a session event (one of `ev.SESSION_KINDS`): stored, then published; no
        run's fold takes it."""
        return record_session_event(self.store, self.publish, self.session_id, event_type, fields)

    def record_interrupted(self, call: CallState, tool_call: ToolCall) -> None:
        """Give a tool call that started but never finished its result: unknown, not re-run."""
        self.record(
            call,
            ev.ToolFinished,
            tool_call_id=tool_call.id,
            tool=tool_call.name,
            content=INTERRUPTED,
            is_error=True,
            interrupted=True,
        )

    def tools_for(self, agent: Agent) -> dict[str, Tool]:
        return {**self.tools, **{t.name: t for t in agent.tools}}

    def specs_for(self, agent: Agent) -> tuple[ToolSpec, ...]:
        """The tools the model of `agent` is offered (computed once per agent per run)."""
        specs = self._specs.get(agent.name)
        if specs is None:
            own = [ToolSpec(**tool_spec(t)) for t in self.tools_for(agent).values()]
            peers = [call_agent_spec(list(self.agents.values())), FINISH_SPEC]
            builtin = {CALL_AGENT, FINISH}
            specs = tuple([s for s in own if s.name not in builtin] + peers)
            self._specs[agent.name] = specs
        return specs


def record_session_event(
    store: Store,
    publish: Publish,
    session_id: str,
    event_type: type[ev.Event],
    fields: dict[str, Any],
) -> ev.Event:
    """Store a session event, then hand it to the front ends (a run's, or an idle session's)."""
    event = store.append(event_type(session_id=session_id, **fields))
    publish(event)
    return event
