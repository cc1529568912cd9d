"""`SessionUpkeep`: what changes stored sessions as wholes — delete, fork, prune, and the
discarding of a session left without a turn.

Front ends reach these through `open_upkeep()` (`moot sessions delete | fork | prune`, `/fork`)
and never touch the store. A session some runtime holds (in any process) is neither deleted
nor pruned: its claim is taken first, so the answer is `SessionBusy` rather than a log pulled
from under a live run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec

from moot.protocol import events as ev
from moot.protocol.titles import title_of
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

    def discard_if_empty(self, session_id: str) -> bool:
        """Delete the session if it holds no turn (opened and left without a word): True if
        it did. Its claim is taken first and the session read under it, so a session another
        runtime has meanwhile opened, or given a turn, is kept.
        """
        try:
            claim = self._store.claim(session_id)
        except (SessionBusy, UnknownSessionError):
            return False
        try:
            # A turn's first event sets the state, in the same write: no event is read back
            # (the first decode builds the decoder of every event kind, milliseconds).
            info = self._store.session(session_id)
            if info is None or info.last_run_state is not None:
                return False
            self._store.delete_session(session_id)
            return True
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
        its events (renumbered), and the file snapshots of the runs it keeps. A fork shares
        whole runs only, so it has no half run to resume: an `at` inside a run is refused,
        naming the seqs that leave the run out or keep it; without `at`, a run still open at
        the end (a crash, a live run) is left out. `session_forked` follows what it copied
        (the ledger counts the copied usage in the original only). Its title says whose fork
        it is, even when the original was renamed.

        Raises:
            KeyError: no such session, `at` is not one of its events, or it falls inside a run.
        """
        info = self._store.session(session_id)
        if info is None:
            raise KeyError(f"no session {session_id!r}")
        last = info.event_count if at is None else at
        if not 0 <= last <= info.event_count:
            raise KeyError(f"session {session_id} has events 1..{info.event_count}, not {at}")
        kept = self._store.events(session_id, before_seq=last + 1) if last else []
        finished = {e.run_id for e in kept if isinstance(e, ev.TurnFinished)}
        starts = [e for e in kept if isinstance(e, ev.TurnStarted)]
        if at is not None and starts and starts[-1].run_id not in finished:
            raise KeyError(self._inside_a_run(session_id, at, starts))
        title = (info.title or session_id) + FORK_SUFFIX
        fork = self._store.create_session(title=title, workspace=info.workspace)
        for event in kept:
            if event.run_id and event.run_id not in finished:
                continue
            self._store.append(msgspec.structs.replace(event, session_id=fork.id))
        self._store.append(ev.SessionForked(session_id=fork.id, source=session_id, at=last))
        copied = self._store.session(fork.id)
        if copied is not None and copied.title != title:
            # A rename it copied titled it as the original: it is the fork of that title.
            self._store.append(
                ev.SessionRenamed(session_id=fork.id, title=title, previous=copied.title)
            )
        for run_id in sorted(finished):
            for path, digest in self._store.snapshots(session_id, run_id).items():
                self._store.record_snapshot(fork.id, run_id, path, digest)
        return fork.id

    def _inside_a_run(self, session_id: str, at: int, starts: list[ev.TurnStarted]) -> str:
        """Why a fork at `at` is refused: the run it falls in, and the seqs that would work."""
        run = starts[-1]
        ends = self._store.events(session_id, run_id=run.run_id, kinds=("turn_finished",))
        turn = f"turn {len(starts)} ({title_of(run.prompt)!r}"
        before = (
            f"fork at {run.seq - 1} to leave it out"
            if run.seq > 1
            else "nothing comes before it to share"
        )
        if not ends:
            return (
                f"event {at} is inside {turn}, from event {run.seq}), which has not finished, "
                f"and a fork shares whole turns: {before}"
            )
        end = ends[0].seq
        return (
            f"event {at} is inside {turn}, events {run.seq}..{end}), and a fork shares whole "
            f"turns: {before}, or at {end} to keep it"
        )
