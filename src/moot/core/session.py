"""Loading a session: the conversation so far and any unfinished run.

At the end of every run the runtime saves a session checkpoint (each agent's conversation with
the person, the mode and the models it switched to), so loading reads that checkpoint and only
the events after it. The conversations are kept item by item (`History.unsaved`): a checkpoint
writes the messages its run added, so a turn costs the same at the 50,000th event as at the
1,000th; a checkpoint an older moot wrote (the whole history as one JSON value) still loads,
and the next save writes it item by item. Inside an unfinished run every stored event is a
consistent point: the fold of the run's events is exactly what the crashed process knew.
"""

from __future__ import annotations

from typing import Any

import msgspec

from moot.core.fold import RunFold
from moot.core.history import History
from moot.core.limits import Limits
from moot.protocol.events import (
    SESSION_KINDS,
    HistoryCompacted,
    ModeChanged,
    ModelChanged,
    ModelResponded,
    SessionResumed,
    TurnStarted,
)
from moot.protocol.messages import Message
from moot.protocol.modes import ModeName
from moot.store.base import Store

RECENT_ANSWERS = 64
"""How many of the last `model_responded` events `recorded_model` looks through."""
CHECKPOINT = "session"
"""The checkpoint key of session-level state (runs have their own ids)."""
POOL_KINDS = ("session_resumed", "turn_started")
"""The events that say which agents a session runs with (`recorded_agents`)."""


class SessionState(msgspec.Struct):
    history: History = msgspec.field(default_factory=History)
    """Each agent's conversation with the person over the finished runs."""
    open_run: RunFold | None = None
    """The run a crash or a stop left unfinished, folded up to its last event."""
    mode: ModeName | None = None
    """The permission mode the session last switched to (`mode_changed`); None if it never did."""
    models: dict[str, str] = {}
    """The model each agent last switched to (`model_changed`), by agent."""

    def save(self, store: Store, session_id: str, seq: int) -> None:
        """Save the session's checkpoint as of event `seq`: the mode and models, and what the
        conversations gained since the last save."""
        data = {"mode": self.mode, "models": self.models}
        kept = store.save_checkpoint(session_id, CHECKPOINT, seq, data, self.history.unsaved())
        self.history.saved(kept=kept)

    @classmethod
    def from_checkpoint(cls, store: Store, session_id: str, data: dict[str, Any]) -> SessionState:
        if "history" in data:  # as an older moot saved it: the next save writes it anew
            history = History(msgspec.convert(data["history"], dict[str, list[Message]]))
        else:
            lists = store.checkpoint_lists(session_id, CHECKPOINT)
            conversations = {
                key: msgspec.json.decode(items, type=list[Message]) for key, items in lists.items()
            }
            history = History(conversations, saved=True)
        return cls(
            history=history,
            mode=data.get("mode"),
            models=dict(data.get("models") or {}),
        )

    def compact(self, event: HistoryCompacted) -> None:
        """Take a `history_compacted` in: the agent's conversation as the fold of it."""
        from moot.core.compact import apply  # lazy: only compacted sessions need it

        self.history.rewrite(event.agent, apply(self.history.get(event.agent, ()), event))

    def finish_run(self, fold: RunFold) -> None:
        """Take a finished run in (its fold has already updated the history)."""
        self.open_run = None


def load_session(store: Store, session_id: str, limits: Limits) -> SessionState:
    """The session as of its last event: latest checkpoint, then a fold of what follows."""
    saved = store.latest_checkpoint(session_id, CHECKPOINT)
    after = 0
    state = SessionState()
    if saved is not None:
        after, data = saved
        state = SessionState.from_checkpoint(store, session_id, data)
    fold: RunFold | None = None
    for event in store.events(session_id, after_seq=after):
        if isinstance(event, ModeChanged):
            state.mode = event.mode
        elif isinstance(event, ModelChanged):
            state.models[event.agent] = event.model
        elif isinstance(event, HistoryCompacted):
            state.compact(event)
        if event.kind in SESSION_KINDS:
            continue  # of the session, not of a run: no fold takes them
        if isinstance(event, TurnStarted):
            run_limits = Limits(**event.limits) if event.limits else limits
            fold = RunFold(run_limits, state.history)
        if fold is None:
            continue
        fold.apply(event)
        if event.kind == "turn_finished":
            state.finish_run(fold)
            fold = None
    if fold is not None and fold.started_at and fold.last_at:
        fold.totals.elapsed_before = (fold.last_at - fold.started_at).total_seconds()
    state.open_run = fold
    return state


def recorded_model(store: Store, session_id: str, agent: str) -> str | None:
    """The model `agent` last switched to in the session (`model_changed`), if it ever did:
    what a resumed session goes on with unless the front end names another."""
    saved = store.latest_checkpoint(session_id, CHECKPOINT)
    after, model = 0, None
    if saved is not None:
        after, data = saved
        model = (data.get("models") or {}).get(agent)
    for event in store.events(session_id, after_seq=after, kinds=("model_changed",)):
        if isinstance(event, ModelChanged) and event.agent == agent:
            model = event.model
    if model is None:
        # Never switched: the model it opened with, as the last answer it gave names it.
        answers = store.events(session_id, kinds=("model_responded",), limit=RECENT_ANSWERS)
        model = next(
            (
                e.model
                for e in reversed(answers)
                if isinstance(e, ModelResponded) and e.agent == agent
            ),
            None,
        )
    return model


def recorded_agents(store: Store, session_id: str) -> tuple[str, ...] | None:
    """The agents the session last ran with, the person's agent first: what its last sitting
    (`session_resumed`) or run (`turn_started.pool`) recorded, whichever came later. A resumed
    session goes on with them unless the front end names others; None when the log does not
    say (it has neither, or is older than the record)."""
    last = store.events(session_id, kinds=POOL_KINDS, limit=1)
    if not last:
        return None
    event = last[0]
    if isinstance(event, SessionResumed):
        return event.agents or None
    if isinstance(event, TurnStarted):
        return event.pool or None
    return None
