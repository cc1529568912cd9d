"""Loading a session from its log: the conversation so far and any unfinished run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from moot.core.fold import RunFold
from moot.core.limits import Limits
from moot.protocol.events import Event
from moot.protocol.messages import Message
from moot.store.base import Store


@dataclass
class SessionState:
    history: dict[str, list[Message]] = field(default_factory=dict)
    """Each agent's conversation with the person over the finished runs."""
    open_run: RunFold | None = None
    """The run a crash or a stop left unfinished, folded up to its last event."""
    model_turns: Counter[str] = field(default_factory=Counter)
    """Model calls each agent has made in this session (scripted providers resume from it)."""


def load_session(store: Store, session_id: str, limits: Limits) -> SessionState:
    """Fold a session's whole log; the result is what the crashed process knew."""
    state = SessionState()
    fold: RunFold | None = None
    for event in store.events(session_id):
        if event.kind == "turn_started":
            run_limits = Limits(**event.limits) if event.limits else limits
            fold = RunFold(run_limits, state.history)
        if fold is None:
            continue
        fold.apply(event)
        if _asked_a_model(event):
            state.model_turns[event.agent] += 1
        elif event.kind == "turn_finished":
            fold = None
    if fold is not None and fold.started_at and fold.last_at:
        fold.totals.elapsed_before = (fold.last_at - fold.started_at).total_seconds()
    state.open_run = fold
    return state


def _asked_a_model(event: Event) -> bool:
    """A model call that ran to an answer or an error (a partial answer also has its error)."""
    if event.kind == "model_responded":
        return not event.partial
    return event.kind == "error" and event.source == "provider"
