"""The stored events behind a run or one of its calls, read through the client's queries with a
bound: what `/inspect` and the app's inspector of a trace node show.

A `Scope` says where to read (a run, from the seq where the scope begins to the one where it
ends, or to the run's last event while it goes on) and what of it to show: the whole run, one
agent call with every call below it, or one tool call. The read goes forward `WINDOW` seqs at
a time, so a long run is never read whole into memory and what is shown begins where the scope
does; it stops at `MAX_SHOWN` events or after `MAX_WINDOWS` windows and says so. Text and
thinking deltas are left out (each `model_responded` holds the whole text); `/export json` has
every event.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from moot.commands.registry import CommandError
from moot.protocol import events as ev
from moot.protocol.client import Queries

MAX_SHOWN = 500
"""Events an inspection shows at most (the first ones of its scope)."""
WINDOW = 1_000
"""Seqs read per query."""
MAX_WINDOWS = 20
"""Queries an inspection makes at most: a call whose siblings wrote most of its span (busy
background agents) stops there rather than walk a whole long run."""
RECENT_RUNS = 20
"""Runs `/inspect` completes and names when an id matches none (they are also a page of the
walk back for an id's prefix)."""
LEFT_OUT = frozenset({"text_delta", "thinking_delta"})
_SHOWN_KINDS = tuple(sorted(ev.EVENT_KINDS - LEFT_OUT))
_DELTAS = "text and thinking deltas left out (each model_responded holds the whole text)"


class Scope(msgspec.Struct, frozen=True):
    """Where an inspection reads, and what of it belongs."""

    run_id: str
    first_seq: int
    """The seq of the scope's first event."""
    last_seq: int | None = None
    """The seq of its last event; None: it has not ended (read to the run's last event)."""
    call_id: str | None = None
    """Only this agent call and the calls it made, theirs too; None: the whole run."""
    tool_call_id: str | None = None
    """Only this tool call of `call_id` (its start, output, approval, hooks and result)."""
    what: str = "run"
    """What the scope is, as a note names it: `run`, `call` or `tool call`."""


class Inspected(msgspec.Struct, frozen=True):
    """What an inspection shows: the scope's events, and what the person should know."""

    events: list[ev.Event]
    note: str = ""
    """Deltas are left out; and whether the bound cut the scope, where, and where it ends."""


def scope_of(events: Sequence[ev.Event]) -> Scope | None:
    """The scope behind a trace node, from the node's own events: a turn's (its
    `turn_started`, maybe its `turn_finished`) is its run; an agent call's (`agent_called`,
    maybe `agent_returned`) is that call and its callees; a tool call's or an approval's is that
    tool call. None for any other node (a message, a hook, an error): its own events are all."""
    first = events[0] if events else None
    if first is None or not first.seq or not first.run_id:
        return None  # not from the store: nothing to read it by

    def end(kinds: type | tuple[type, ...]) -> int | None:
        return next((e.seq for e in events if isinstance(e, kinds)), None)

    match first:
        case ev.TurnStarted():
            return Scope(first.run_id, first.seq, end(ev.TurnFinished))
        case ev.AgentCalled():
            last = end(ev.AgentReturned)
            return Scope(first.run_id, first.seq, last, call_id=first.call_id, what="call")
        case ev.ToolStarted() | ev.ApprovalRequested():
            return Scope(
                first.run_id,
                first.seq,
                end((ev.ToolFinished, ev.ApprovalDecided)),
                call_id=first.call_id,
                tool_call_id=first.tool_call_id,
                what="tool call",
            )
    return None


def run_scope(started: ev.TurnStarted) -> Scope:
    """A whole run, from its `turn_started` to its last event."""
    return Scope(started.run_id, started.seq)


def read(queries: Queries, session_id: str, scope: Scope) -> Inspected:
    """The scope's events, the first `MAX_SHOWN` of them at most, read a window at a time.

    Raises:
        KeyError: the store holds no such session.
    """
    end = scope.last_seq
    if end is None:  # not ended (or not known to have): to the run's last event now
        newest = queries.events(session_id, run_id=scope.run_id, limit=1)
        end = newest[-1].seq if newest else scope.first_seq
    calls = {scope.call_id}
    shown: list[ev.Event] = []
    read_to = scope.first_seq - 1
    for _ in range(MAX_WINDOWS):
        before = min(read_to + WINDOW, end) + 1
        window = queries.events(
            session_id,
            run_id=scope.run_id,
            after_seq=read_to,
            before_seq=before,
            kinds=_SHOWN_KINDS,
        )
        shown += [e for e in window if _belongs(e, scope, calls)]
        read_to = before - 1
        if read_to >= end or len(shown) >= MAX_SHOWN:
            break
    if len(shown) > MAX_SHOWN:
        shown = shown[:MAX_SHOWN]
        read_to = shown[-1].seq
    if read_to >= end:
        return Inspected(shown, _DELTAS)
    cut = (
        f"the first {len(shown)} events of the {scope.what}, to seq {read_to}; it goes on to "
        f"seq {end} (/export json has every event)"
    )
    return Inspected(shown, f"{cut}; {_DELTAS}")


def _belongs(event: ev.Event, scope: Scope, calls: set[str | None]) -> bool:
    """Whether `event` is the scope's; `calls` grows as the calls below the scope's are made
    (a callee's `agent_called` comes before anything of it)."""
    if scope.call_id is None:
        return True
    if scope.tool_call_id is not None:
        return (
            event.call_id == scope.call_id
            and getattr(event, "tool_call_id", None) == scope.tool_call_id
        )
    if isinstance(event, ev.AgentCalled) and event.parent_call_id in calls:
        calls.add(event.call_id)
    return event.call_id in calls


def recent_runs(queries: Queries, session_id: str) -> list[ev.TurnStarted]:
    """The session's last `RECENT_RUNS` runs' starts, oldest first."""
    started = queries.events(session_id, kinds=("turn_started",), limit=RECENT_RUNS)
    return [e for e in started if isinstance(e, ev.TurnStarted)]


def find_run(queries: Queries, session_id: str, typed: str) -> ev.TurnStarted:
    """The start of the run `typed` names: the last run when empty, else the one with that id
    (one read by run, however old the run), else the one whose id it begins (the recent runs
    first, then older ones a page at a time: one page in memory, never the log).

    Neither holds more than a page, but SQLite finds a run's start by walking back from the
    log's end (~35 ms per 100,000 events after it, measured): a `Queries` answer from the
    store's `runs` table would find it at once.

    Raises:
        CommandError: no run, or several, match; it names the recent ones, or the matches.
    """
    recent = recent_runs(queries, session_id)
    if not recent:
        raise CommandError("no runs yet")
    if not typed:
        return recent[-1]
    exact = queries.events(session_id, run_id=typed, kinds=("turn_started",), limit=1)
    if exact and isinstance(exact[0], ev.TurnStarted):
        return exact[0]
    page = recent
    matching = [e for e in reversed(page) if e.run_id.startswith(typed)]
    while len(matching) < 2 and len(page) == RECENT_RUNS:
        older = queries.events(
            session_id, kinds=("turn_started",), before_seq=page[0].seq, limit=RECENT_RUNS
        )
        page = [e for e in older if isinstance(e, ev.TurnStarted)]
        matching += [e for e in reversed(page) if e.run_id.startswith(typed)]
    if len(matching) == 1:
        return matching[0]
    if matching:
        named = ", ".join(e.run_id for e in matching[:3]) + (", …" if len(matching) > 3 else "")
        raise CommandError(f"several runs begin with {typed!r}: {named}")
    near = ", ".join(e.run_id for e in recent[-5:])
    raise CommandError(f"no run {typed!r}; recent runs: {near}")
