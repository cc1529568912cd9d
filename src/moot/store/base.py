"""The store seam: sessions, their append-only event logs, run checkpoints and file snapshots.

The runtime writes every event through `Store.append` before any front end sees it; the store
assigns `seq` and refuses events that break the log's rules (`moot.store.invariants`).

A checkpoint may keep lists that only grow at their end (a session's conversations) item by
item, so that saving one writes what was added since the last save, not the whole list again
(`ListTail`).

File snapshots keep what a file held before a run first changed it, so a rewind can put it
back: the content goes into content-addressed blobs (sha256, each stored once) and a snapshot
row names the blob, or records that the file did not exist.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

if TYPE_CHECKING:
    from moot.protocol.events import Event
    from moot.store.claims import SessionClaim


class UnknownSessionError(KeyError):
    """A session id the store does not hold."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return f"no session {self.session_id!r} in this store"


def as_utc(moment: datetime) -> datetime:
    """The same moment as an aware UTC datetime; a naive one is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class SessionInfo(msgspec.Struct, frozen=True):
    """What a session list shows about one session."""

    id: str
    title: str
    """A short name people recognise the session by; may be empty."""
    workspace: str
    """The directory the session works in."""
    created_at: datetime
    """When the session was created (UTC)."""
    updated_at: datetime
    """The time stamp of the session's last event, or `created_at` when it has none (UTC)."""
    event_count: int
    """How many events the log holds (its highest seq)."""
    last_run_state: str | None
    """`running` while a run is open, else the state of the last `turn_finished`; None before
    the first run."""


class ListTail(msgspec.Struct, frozen=True):
    """What a checkpoint save changes of one list it keeps item by item: the list is its items
    before `start` as the checkpoint before it kept them, then `items`."""

    start: int
    items: Sequence[bytes]
    """Each item as JSON."""


class Store(Protocol):
    """Sessions, event logs and file snapshots. Implementations: `SQLiteStore`, `MemoryStore`."""

    def create_session(
        self, *, title: str = "", workspace: str = "", session_id: str | None = None
    ) -> SessionInfo:
        """Create an empty session.

        Args:
            title: A short name for session lists.
            workspace: The directory the session works in.
            session_id: The id to use; a new `ses_...` id when None.

        Raises:
            ValueError: A session with that id exists.
        """
        ...

    def session(self, session_id: str) -> SessionInfo | None:
        """The session with that id, or None."""
        ...

    def sessions(self, limit: int = 50, *, workspace: str | None = None) -> list[SessionInfo]:
        """Sessions, the most recently updated first; only those of `workspace` when given."""
        ...

    def turn_totals(self, session_ids: Collection[str]) -> dict[str, tuple[int, float, int]]:
        """For each session, how many runs it holds, what its finished ones cost (USD) and
        the tokens they read and wrote; (0, 0.0, 0) for one without runs, or that the store
        does not hold. Kept as the events are appended: reading them costs the same however
        long the sessions are."""
        ...

    def append(self, event: Event) -> Event:
        """Check an event against the log's rules and persist it durably.

        Args:
            event: The event; its `session_id` names the session, its `seq` is ignored.

        Returns:
            A copy of the event with `seq` set: 1 for a session's first event, then 2, 3, ...

        Raises:
            EventInvariantError: The event breaks a rule; nothing was persisted.
            UnknownSessionError: The store holds no such session.
        """
        ...

    def events(
        self,
        session_id: str,
        *,
        run_id: str | None = None,
        after_seq: int = 0,
        kinds: Collection[str] | None = None,
        before_seq: int | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        """A session's events in seq order, optionally of one run, after a seq, before one, of
        some kinds; with `limit`, only the last `limit` of those (a transcript's tail).

        Raises:
            UnknownSessionError: The store holds no such session.
        """
        ...

    def open_run(self, session_id: str) -> str | None:
        """The id of the session's run that has started and not finished, if any.

        Raises:
            UnknownSessionError: The store holds no such session.
        """
        ...

    def save_checkpoint(
        self,
        session_id: str,
        run_id: str,
        seq: int,
        data: dict[str, Any],
        lists: Mapping[str, ListTail] | None = None,
    ) -> bool:
        """Keep `data` (JSON-serializable) as the runtime's state of a run as of event `seq`,
        and the lists it keeps item by item as `lists` changes them (a list it does not name
        stays as it was).

        Only the newest checkpoint of a run is kept: a save with a lower seq than the one
        stored changes nothing, and a newer one replaces it.

        Returns:
            Whether the save was kept (False: a newer checkpoint is stored).

        Raises:
            ValueError: A `ListTail` starts past the end of the list the checkpoint keeps.
            UnknownSessionError: The store holds no such session.
        """
        ...

    def latest_checkpoint(self, session_id: str, run_id: str) -> tuple[int, dict[str, Any]] | None:
        """The run's checkpoint with the highest seq, as `(seq, data)`, or None.

        Raises:
            UnknownSessionError: The store holds no such session.
        """
        ...

    def checkpoint_lists(self, session_id: str, run_id: str) -> dict[str, bytes]:
        """The lists the run's checkpoint keeps item by item, each as one JSON array.

        Raises:
            UnknownSessionError: The store holds no such session.
        """
        ...

    def put_blob(self, data: bytes) -> str:
        """Keep `data` under its sha256; storing the same bytes again changes nothing.

        Returns:
            The sha256 hex digest, the blob's name.
        """
        ...

    def get_blob(self, digest: str) -> bytes:
        """The bytes stored under `digest`.

        Raises:
            KeyError: No blob has that digest.
        """
        ...

    def attachment_data(self, digest: str) -> str:
        """The base64 of the attachment stored under `digest` (`Attachment.ref`).

        Raises:
            KeyError: No blob has that digest.
        """
        ...

    def record_snapshot(self, session_id: str, run_id: str, path: str, digest: str | None) -> None:
        """Remember what `path` held before the run first changed it.

        The first record per (session, run, path) wins; later ones change nothing, so a file
        changed twice in a run keeps the content it had before the first change.

        Args:
            session_id: The session.
            run_id: The run (user turn) that changed the file.
            path: The file, as the caller names it (moot uses workspace-relative POSIX paths).
            digest: The blob holding the old content; None when the file did not exist.

        Raises:
            KeyError: `digest` names no stored blob (put it first).
            UnknownSessionError: The store holds no such session.
        """
        ...

    def snapshots(self, session_id: str, run_id: str) -> dict[str, str | None]:
        """The files a run changed, each with the blob of its earlier content (None: absent).

        Raises:
            UnknownSessionError: The store holds no such session.
        """
        ...

    def delete_session(self, session_id: str) -> None:
        """Remove the session: its events, runs, checkpoints and snapshots, and the blobs no
        other session's snapshots name.

        Raises:
            UnknownSessionError: The store holds no such session.
        """
        ...

    def claim(self, session_id: str) -> SessionClaim:
        """Claim the session for one runtime until the claim is released (or dropped).

        A runtime claims its session before it reads it, so two never append to one session;
        a second claim is refused at once, never waited for.

        Raises:
            SessionBusy: Another runtime holds the session (in this process, or, for a store
                on a file, in any process).
            UnknownSessionError: The store holds no such session.
        """
        ...

    def close(self) -> None:
        """Release the store's resources (and the claims taken through it); it is not used
        afterwards."""
        ...
