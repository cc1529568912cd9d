"""`CallScope`: one agent call as its drive (`core/loop.py`) and its steps see it.

The drive and the steps it runs (`core/model_step.py`, `core/tool_step.py`,
`core/peer_calls.py`, `core/approve.py`) share the run, the call's state in the fold, the agent
its last model request went to, its hooks, and the one way its events are recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.core.agent import Agent
from moot.core.call_state import CallState
from moot.core.peers import PERSON
from moot.core.run import CallEnded, RunContext
from moot.protocol import events as ev
from moot.protocol.states import RunState, StopReason

if TYPE_CHECKING:
    from moot.core.hook_points import CallHooks

PERSON_AGENT = Agent("person")
"""What the loop reads as the agent of the person's own call: no model, no tools of its own."""


class CallScope:
    """One agent call of a run, as the steps of its drive share it.

    Args:
        run: What the run's calls share (`RunContext`).
        call: The call's state in the run's fold.
    """

    def __init__(self, run: RunContext, call: CallState) -> None:
        self.run = run
        self.call = call
        self.person = call.agent == PERSON
        """The person's own call (several starting agents): no model, no agent of its own."""
        self.agent = run.agents[call.agent] if not self.person else PERSON_AGENT
        """The call's agent as its last model request read it (the session may renew it)."""
        self.hooks: CallHooks | None = None
        hooks = run.settings.hooks
        if hooks is not None:
            from moot.core.hook_points import CallHooks  # lazy: without hooks, never imported

            self.hooks = CallHooks(run, call, hooks)

    def record(self, event: ev.Event) -> ev.Event:
        """Append an event of this call (store, fold, front ends: `RunContext.record`)."""
        return self.run.record(self.call, event)

    def move(self, target: RunState) -> None:
        """Record the call's move to the run state `target`."""
        self.record(ev.StateChanged(from_state=self.call.state, to_state=target))

    def check_hook_stop(self) -> None:
        """End the call if a hook refused its prompt or said `continue: false` (the fold knows).

        Raises:
            CallEnded: A hook stopped the call.
        """
        if self.call.hook_stop is not None:
            raise CallEnded(StopReason.HOOK_BLOCKED, self.call.hook_stop)
