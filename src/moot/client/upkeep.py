"""`SessionUpkeep`: what changes stored sessions as wholes — delete, fork, prune.

Front ends reach these through `open_upkeep()` (`moot sessions delete | fork | prune`, `/fork`)
and never touch the store. A session some runtime holds (in any process) is neither deleted
nor pruned: its claim is taken first, so the answer is `SessionBusy` rather than a log pulled
from under a live run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec

from moot.protocol import events as ev
from moot.store.base import Store, UnknownSessionError
from moot.store.claims import SessionBusy

FORK_SUFFIX = " (fork)"


class SessionUpkeep:
    """Delete, fork and prune the sessions of one store."""

    def __init__(self, store: Store, *, owns_store: bool = False) -> None:
        self._store = store
        self._owns_store = owns_store

    def close(self) -> None:
        if self._owns_store:
            self._store.close()

    def delete(self, session_id: str) -> None:
        """Remove a session and what only it used.

        Raises:
            KeyError: no such session.
            SessionBusy: a runtime holds it.
        """
        try:
            claim = self._store.claim(session_id)
        except UnknownSessionError:
            raise KeyError(f"no session {session_id!r}") from None
        try:
            self._store.delete_session(session_id)
        finally:
            claim.release()

    def prune(self, older_than: timedelta, *, now: datetime | None = None) -> list[str]:
        """Delete every session whose last event is older than `older_than`; the ids deleted.
        A session a runtime holds is left alone."""
        cutoff = (now or datetime.now(UTC)) - older_than
        gone: list[str] = []
        for info in self._store.sessions(limit=1_000_000):
            if info.updated_at >= cutoff:
                continue
            try:
                self.delete(info.id)
            except (SessionBusy, KeyError):
                continue
            gone.append(info.id)
        return gone

    def fork(self, session_id: str, at: int | None = None) -> str:
        """A new session sharing `session_id`'s history up to event `at` (all of it when None;
        none of it when 0):
        its events (renumbered), and the file snapshots of the runs it keeps. A run not
        finished by `at` is left out whole, so the fork has no half run to resume.

        Raises:
            KeyError: no such session, or `at` is not one of its events.
        """
        info = self._store.session(session_id)
        if info is None:
            raise KeyError(f"no session {session_id!r}")
        last = info.event_count if at is None else at
        if not 0 <= last <= info.event_count:
            raise KeyError(f"session {session_id} has events 1..{info.event_count}, not {at}")
        kept = self._store.events(session_id, before_seq=last + 1) if last else []
        finished = {e.run_id for e in kept if isinstance(e, ev.TurnFinished)}
        title = (info.title or session_id) + FORK_SUFFIX
        fork = self._store.create_session(title=title, workspace=info.workspace)
        for event in kept:
            if event.run_id and event.run_id not in finished:
                continue
            self._store.append(msgspec.structs.replace(event, session_id=fork.id))
        for run_id in sorted(finished):
            for path, digest in self._store.snapshots(session_id, run_id).items():
                self._store.record_snapshot(fork.id, run_id, path, digest)
        return fork.id
