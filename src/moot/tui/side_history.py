"""What the side panes (the trace and the tools pane) show of a resumed session: the trace of
the tail the chat shows, read bounded through the client's queries.

The chat shows the tail of a resumed session first (older blocks page in on demand). The side
panes take every event they would have taken live from the start of the tail's first run (its
`turn_started`, before the tail when the tail begins inside a run) to the tail's end, so their
lines for those runs are the ones a live app shows: callees returned and collapsed, tokens and
cost, approvals, messages. Runs before that are not in them; paging the chat back in does not
add them (the store and `/inspect` have them). A run longer than `SIDE_TAIL` such events shows
its last ones only.
"""

from __future__ import annotations

from collections.abc import Sequence

from moot.protocol import events as ev
from moot.protocol.client import Queries
from moot.tui.widgets.trace import TRACED_KINDS

SIDE_TAIL = 2_000
"""Events the side panes read at most when a session resumes (the last ones)."""


def side_history(
    query: Queries, session_id: str, shown: Sequence[ev.Event], last_seq: int
) -> list[ev.Event]:
    """The events the trace and tools panes take for the chat's tail `shown`.

    Args:
        query: The client's queries.
        session_id: The session shown.
        shown: The chat's tail, in seq order.
        last_seq: The seq the app goes on from live (nothing after it is read: the
            subscription replays it).
    """
    if not shown:
        return []
    first = shown[0]
    start = first.seq
    if first.run_id and not isinstance(first, ev.TurnStarted):
        # The tail begins inside a run: its start comes first, or the run's calls would show
        # as lines without a turn (one read by run: the store walks back to its start, which
        # is near, since the run holds the tail's first event).
        began = query.events(session_id, run_id=first.run_id, kinds=("turn_started",), limit=1)
        start = began[0].seq if began else start
    return query.events(
        session_id,
        after_seq=start - 1,
        before_seq=last_seq + 1,
        kinds=TRACED_KINDS,
        limit=SIDE_TAIL,
    )
