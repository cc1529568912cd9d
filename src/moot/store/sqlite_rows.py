"""The rows of the sessions database: an event written as its row (with the run's and the
session's bookkeeping a few events need), and a session read back as a `SessionInfo`."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any

from moot.protocol.titles import title_of
from moot.store.base import SessionInfo, as_utc
from moot.store.sqlite_schema import transaction

if TYPE_CHECKING:
    from moot.protocol.events import Event

INSERT_EVENT = "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)"

# A session with the live count and update time taken from its last event (primary key lookups).
SELECT_INFO = """
    SELECT s.id, s.title, s.workspace, s.created_at, s.last_state,
           COALESCE(last.seq, 0), COALESCE(last.ts, s.created_at) AS updated
    FROM sessions AS s
    LEFT JOIN events AS last
        ON last.session_id = s.id
        AND last.seq = (SELECT MAX(seq) FROM events WHERE session_id = s.id)
"""


def iso(moment: datetime) -> str:
    """`moment` as stored: fixed width, always UTC, so the text sorts in time order."""
    return as_utc(moment).isoformat(timespec="microseconds")


def session_info(row: tuple[Any, ...]) -> SessionInfo:
    """A row of `SELECT_INFO` as a `SessionInfo`."""
    session_id, title, workspace, created_at, last_state, count, updated_at = row
    return SessionInfo(
        id=session_id,
        title=title,
        workspace=workspace,
        created_at=datetime.fromisoformat(created_at),
        updated_at=datetime.fromisoformat(updated_at),
        event_count=count,
        last_run_state=last_state,
    )


def insert_event(db: sqlite3.Connection, event: Event, body: str) -> None:
    """Write `event` (its JSON form `body`, checked) as its row: a run's first and last event
    also write the run's row and the session's, a rename the session's title, in the same
    transaction; every other event is the one INSERT, committed on its own."""
    from moot.protocol.events import SessionRenamed, TurnFinished, TurnStarted

    seq, ts = event.seq, iso(event.ts)
    row = (event.session_id, seq, event.run_id, event.call_id, event.kind, ts)
    if isinstance(event, TurnStarted):
        with transaction(db):
            db.execute(INSERT_EVENT, (*row, body))
            db.execute(
                "INSERT INTO runs (session_id, run_id, started_seq) VALUES (?, ?, ?)",
                (event.session_id, event.run_id, seq),
            )
            _mark_session(db, event.session_id, ts, seq, "running")
            # An untitled session is titled by its first prompt (no model call).
            db.execute(
                "UPDATE sessions SET title = ? WHERE id = ? AND title = ''",
                (title_of(event.prompt), event.session_id),
            )
    elif isinstance(event, TurnFinished):
        with transaction(db):
            db.execute(INSERT_EVENT, (*row, body))
            db.execute(
                "UPDATE runs SET finished_seq = ?, state = ? WHERE session_id = ? AND run_id = ?",
                (seq, str(event.state), event.session_id, event.run_id),
            )
            _mark_session(db, event.session_id, ts, seq, str(event.state))
    elif isinstance(event, SessionRenamed):
        with transaction(db):
            db.execute(INSERT_EVENT, (*row, body))
            db.execute(
                "UPDATE sessions SET title = ? WHERE id = ?", (event.title, event.session_id)
            )
    else:
        # The hot path: one statement, committed on its own.
        db.execute(INSERT_EVENT, (*row, body))


def _mark_session(db: sqlite3.Connection, session_id: str, ts: str, seq: int, state: str) -> None:
    db.execute(
        "UPDATE sessions SET updated_at = ?, event_count = ?, last_state = ? WHERE id = ?",
        (ts, seq, state, session_id),
    )
