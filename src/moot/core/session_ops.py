"""The answers to the ops that change a session outside its runs (`SetMode`, `SetModel`,
`Rename`), and whether a turn or a `Compact` may start.

Each is a function of the session as it is now that returns the event answering the op (the
change, or `op_refused` saying why not) without recording it: `Runtime.submit` records it
(`record_session`), which is the one way the session changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from moot.core.agent import Agent
from moot.core.session import SessionState
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.modes import ModeName
from moot.protocol.titles import TITLE_LENGTH
from moot.providers.base import Provider
from moot.providers.registry import UnknownModel


def turn_refusal(
    op: ops.UserTurn,
    *,
    busy: str,
    session: SessionState,
    agents: Mapping[str, Agent],
    entry: Agent,
    unusable_model: Callable[[str], str],
) -> str:
    """Why `op` cannot start a turn now ("" when it can): one runs (`busy` comes first, as for
    any turn), its model cannot be used, it names an agent the session lacks, or the log
    holds a turn a crash left open."""
    if busy:
        return busy
    if op.model is not None and (why := unusable_model(op.model)):
        return why
    if unknown := [a for a in (*op.agents, op.agent or entry.name) if a not in agents]:
        return f"no agent {unknown[0]!r} in this run; agents: {', '.join(agents)}"
    if session.open_run is not None:
        # A new run cannot start while the log holds one a crash left open (the store
        # refuses its turn_started): the front end resumes that one first.
        return (
            "the last turn was interrupted (moot ended in the middle of it): resume it "
            "first (resume_run), then send this"
        )
    return ""


def set_mode(
    session: SessionState, mode: ModeName, *, has_modes: bool, submission: str
) -> ev.Event | None:
    """`SetMode`: `mode_changed`, refused in a session without modes; None when the session is
    in that mode already (nothing changes, and nothing answers)."""
    previous = session.mode
    if not has_modes or previous is None:
        return ev.OpRefused(
            op="set_mode",
            reason="this session has no permission modes (no permission rules)",
            submission_id=submission,
        )
    if mode == previous:
        return None
    return ev.ModeChanged(mode=mode, previous=previous, submission_id=submission)


def set_model(
    agent: Agent | None,
    model: str,
    *,
    agents: Mapping[str, Agent],
    name: str | None,
    running: bool,
    resolve: Callable[[str], Provider],
    submission: str,
) -> ev.Event | None:
    """`SetModel`: `model_changed` for `agent` (None: the op named no agent of the session),
    refused while a turn runs or for a model that cannot be used; None when the agent has
    that model already."""

    def refused(reason: str) -> ev.Event:
        return ev.OpRefused(op="set_model", reason=reason, submission_id=submission)

    model = model.strip()
    if agent is None:
        return refused(f"no agent {name!r}; agents: {', '.join(agents)}")
    if running:
        return refused("a turn is running: switch the model when it has ended (or interrupt it)")
    previous = agent.model if isinstance(agent.model, str) else agent.model.name
    if model == previous:
        return None
    try:
        # Resolved only to check it (a bad name, a missing key); the turn that needs the
        # provider makes it, so that a scripted one is moved past turns already played.
        resolve(model)
    except UnknownModel as exc:
        return refused(str(exc))
    return ev.ModelChanged(
        agent=agent.name, model=model, previous=previous, submission_id=submission
    )


def rename(title: str, *, previous: str, submission: str) -> ev.Event:
    """`Rename`: `session_renamed` with the title tidied (one line, `TITLE_LENGTH` at most);
    refused when it has no word."""
    title = " ".join(title.split())[:TITLE_LENGTH]
    if not title:
        reason = "a title needs a word: /rename TITLE"
        return ev.OpRefused(op="rename", reason=reason, submission_id=submission)
    return ev.SessionRenamed(title=title, previous=previous, submission_id=submission)


def compact_refusal(
    session: SessionState,
    agent: Agent | None,
    *,
    agents: Mapping[str, Agent],
    name: str | None,
    running: bool,
) -> str:
    """Why a `Compact` of `agent`'s conversation cannot start ("" when it can): no such agent,
    a turn runs or is unfinished, or there is nothing to compact yet."""
    if agent is None:
        return f"no agent {name!r}; agents: {', '.join(agents)}"
    if running or session.open_run is not None:
        return "a turn is running or unfinished: compact when it has ended"
    if not session.history.get(agent.name):
        return "nothing to compact yet"
    return ""
