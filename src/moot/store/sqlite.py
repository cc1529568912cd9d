"""The sessions database: one SQLite file holding every session's event log.

Appending is one INSERT (a run's first and last event also touch `runs` and `sessions`, in the
same transaction), so its cost does not grow with the log. The rules of the log are checked in
memory by one `SessionLog` per session; a session this process did not create is loaded once,
on its first append, by replaying only its open run.

Several processes may share the file (WAL journal; writers wait up to `BUSY_TIMEOUT_S` for each
other). When another connection appended to the same session in between, the seq this process
would assign is taken: the insert fails on the primary key, the log is reloaded and the event
checked again, so the rules hold across processes too.

File snapshots live in two more tables: `blobs` (content by sha256, each stored once) and
`snapshots` (per session, run and path, the blob a file held before the run changed it).

Every SQLite or OS error reaches the caller as a `StoreError` saying what to do
(`moot.store.errors`), and a file that is not moot's database is never written: a damaged one
fails on its first read, and a database of another program (tables, but no moot schema
version) is refused before anything is changed. A session is served by one runtime at a time:
`claim` takes the session's lock file (`moot.store.claims`).

The file itself (its modes, schema and migrations, what it refuses) is `sqlite_schema`'s; how
an event and a session map to rows, `sqlite_rows`'s.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import weakref
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from moot.protocol.ids import new_id
from moot.store.base import ListTail, SessionInfo, UnknownSessionError
from moot.store.claims import SessionClaim, claim_by_lock
from moot.store.errors import StoreError, damaged, from_os, from_sqlite
from moot.store.sqlite_rows import SELECT_INFO, insert_event, iso, session_info
from moot.store.sqlite_schema import (
    make_private,
    migrate,
    refuse_a_foreign_database,
    transaction,
)
from moot.store.wal import BACKSTOP_PAGES, WalCheckpointer

if TYPE_CHECKING:
    from moot.protocol.events import Event
    from moot.store.attachment_blobs import Unpacker
    from moot.store.invariants import SessionLog

# The event classes and the log's rules (`moot.store.invariants`) load at the first append or
# read of a log, not with this module: `moot sessions list` opens the store and reads neither
# (~4 ms of its start-up, a benchmark).

BUSY_TIMEOUT_S = 10.0
"""How long a write waits for another connection's write to finish."""
_APPEND_ATTEMPTS = 5
_PER_SESSION = (
    "events", "runs", "checkpoints", "checkpoint_items", "snapshots", "attachment_refs"
)  # fmt: skip


class SQLiteStore:
    """The `Store` contract in a SQLite file; safe to share between threads and processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """Open (and create, with its parent directories) the database at `path`.

        Raises:
            StoreError: The file cannot be made, opened or read as moot's database, or is
                from a newer moot; the message says what to do.
        """
        self.path = Path(path)
        try:
            make_private(self.path)
        except OSError as exc:
            raise from_os(exc, self.path) from None
        # One connection serves every thread; the lock keeps transactions from interleaving.
        self._lock = threading.RLock()
        self._logs: dict[str, SessionLog] = {}
        self._claims: weakref.WeakSet[SessionClaim] = weakref.WeakSet()
        self._wal = WalCheckpointer(self.path)
        self._unpacker: Unpacker | None = None  # at the first event read (`_blobs`)
        with self._guard():
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            try:
                self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
                refuse_a_foreign_database(self._db, self.path)
                self._db.execute("PRAGMA journal_mode = WAL")
                # With WAL, NORMAL survives a crash of the process (not of the machine) and
                # spares an fsync per append.
                self._db.execute("PRAGMA synchronous = NORMAL")
                # The WAL is copied into the file on another thread (`moot.store.wal`); this
                # connection does it only past a backstop.
                self._db.execute(f"PRAGMA wal_autocheckpoint = {BACKSTOP_PAGES}")
                migrate(self._db, self.path)
            except BaseException:
                self._db.close()
                raise

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ---- sessions -----------------------------------------------------------------------------

    def create_session(
        self, *, title: str = "", workspace: str = "", session_id: str | None = None
    ) -> SessionInfo:
        session_id = session_id or new_id("ses")
        now = iso(datetime.now(UTC))
        with self._guard():
            try:
                self._db.execute(
                    "INSERT INTO sessions (id, title, workspace, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (session_id, title, workspace, now, now),
                )
            except sqlite3.IntegrityError:
                raise ValueError(f"session {session_id!r} exists") from None
            from moot.store.invariants import SessionLog

            self._logs[session_id] = SessionLog(session_id)
        info = self.session(session_id)
        assert info is not None
        return info

    def session(self, session_id: str) -> SessionInfo | None:
        with self._guard():
            row = self._db.execute(SELECT_INFO + " WHERE s.id = ?", (session_id,)).fetchone()
        return session_info(row) if row else None

    def sessions(self, limit: int = 50, *, workspace: str | None = None) -> list[SessionInfo]:
        where, params = (
            ("", [limit]) if workspace is None else (" WHERE s.workspace = ?", [workspace, limit])
        )
        with self._guard():
            rows = self._db.execute(
                SELECT_INFO + where + " ORDER BY updated DESC, s.id DESC LIMIT ?", params
            ).fetchall()
        return [session_info(row) for row in rows]

    def turn_totals(self, session_ids: Collection[str]) -> dict[str, tuple[int, float, int]]:
        ids = list(session_ids)
        if not ids:
            return {}
        # Kept on the session's row as its runs begin and end (the schema's triggers).
        sql = (
            "SELECT id, turns, cost_usd, tokens FROM sessions"
            f" WHERE id IN ({', '.join('?' * len(ids))})"
        )
        with self._guard():
            rows = self._db.execute(sql, ids).fetchall()
        totals = {session_id: (0, 0.0, 0) for session_id in ids}
        totals.update({sid: (turns, float(cost), int(tokens)) for sid, turns, cost, tokens in rows})
        return totals

    # ---- the log ------------------------------------------------------------------------------

    def append(self, event: Event) -> Event:
        from moot.store.invariants import check_schema  # see the imports

        with self._guard():
            for _ in range(_APPEND_ATTEMPTS):
                log = self._log(event.session_id)
                # Rule f first: the other rules read fields, and must read them as stored.
                body, stored = check_schema(replace(event, seq=log.next_seq))
                log.check(stored)
                body = self._packed(event.session_id, body)
                try:
                    insert_event(self._db, stored, body)
                except sqlite3.IntegrityError:
                    # Another connection appended to this session since its log was loaded:
                    # reload it and check the event against what is really there.
                    del self._logs[event.session_id]
                    continue
                log.record(stored)
                self._wal.committed()
                return stored
            raise RuntimeError(
                f"could not append to session {event.session_id}: other writers kept taking "
                f"its next seq"
            )

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
        sql = "SELECT body FROM events WHERE session_id = ? AND seq > ?"
        params: list[Any] = [session_id, after_seq]
        if before_seq is not None:
            sql += " AND seq < ?"
            params.append(before_seq)
        if run_id is not None:
            sql += " AND run_id = ?"
            params.append(run_id)
        if kinds is not None:
            kinds = [kinds] if isinstance(kinds, str) else list(kinds)
            sql += f" AND kind IN ({', '.join('?' * len(kinds))})"
            params.extend(kinds)
        with self._guard():
            self._require(session_id)
            if kinds == []:
                return []
            if limit is None:
                rows = self._db.execute(sql + " ORDER BY seq", params).fetchall()
            else:  # the last `limit`: read backwards, then put them in order
                newest = self._db.execute(sql + " ORDER BY seq DESC LIMIT ?", [*params, limit])
                rows = newest.fetchall()[::-1]
        return [self._decode(session_id, body) for (body,) in rows]

    def open_run(self, session_id: str) -> str | None:
        with self._guard():
            self._require(session_id)
            row = self._db.execute(
                "SELECT run_id FROM runs WHERE session_id = ? AND finished_seq IS NULL",
                (session_id,),
            ).fetchone()
        return row[0] if row else None

    # ---- checkpoints --------------------------------------------------------------------------

    def save_checkpoint(
        self,
        session_id: str,
        run_id: str,
        seq: int,
        data: dict[str, Any],
        lists: Mapping[str, ListTail] | None = None,
    ) -> bool:
        import json  # here, as in latest_checkpoint: `moot sessions list` reads no checkpoint

        text = json.dumps(data)
        key = (session_id, run_id)
        with self._guard():
            self._require(session_id)
            # Only the newest checkpoint of a run is ever read: keep just that one, so a long
            # session does not store its history once per turn.
            with transaction(self._db):
                newer = self._db.execute(
                    "SELECT 1 FROM checkpoints WHERE session_id = ? AND run_id = ? AND seq > ?",
                    (*key, seq),
                ).fetchone()
                if newer is not None:
                    return False
                self._db.execute("DELETE FROM checkpoints WHERE session_id = ? AND run_id = ?", key)
                self._db.execute("INSERT INTO checkpoints VALUES (?, ?, ?, ?)", (*key, seq, text))
                for name, tail in (lists or {}).items():
                    self._save_tail(key, name, tail)
            return True

    def _save_tail(self, key: tuple[str, str], name: str, tail: ListTail) -> None:
        """Cut the list `name` of the checkpoint `key` at `tail.start`, then add its items:
        what a save costs is what the list gained (and what it lost), never its length."""
        if tail.start:
            before = self._db.execute(
                "SELECT 1 FROM checkpoint_items"
                " WHERE session_id = ? AND run_id = ? AND list = ? AND pos = ?",
                (*key, name, tail.start - 1),
            ).fetchone()
            if before is None:
                raise ValueError(f"the checkpoint keeps fewer than {tail.start} of {name}")
        self._db.execute(
            "DELETE FROM checkpoint_items"
            " WHERE session_id = ? AND run_id = ? AND list = ? AND pos >= ?",
            (*key, name, tail.start),
        )
        items = [self._packed(key[0], item) for item in tail.items]
        self._db.executemany(
            "INSERT INTO checkpoint_items VALUES (?, ?, ?, ?, ?)",
            [(*key, name, tail.start + n, item) for n, item in enumerate(items)],
        )

    def latest_checkpoint(self, session_id: str, run_id: str) -> tuple[int, dict[str, Any]] | None:
        with self._guard():
            self._require(session_id)
            row = self._db.execute(
                "SELECT seq, data FROM checkpoints WHERE session_id = ? AND run_id = ?"
                " ORDER BY seq DESC LIMIT 1",
                (session_id, run_id),
            ).fetchone()
        if row is None:
            return None
        import json  # here: ~2.5 ms of `moot sessions list`, which reads no checkpoint

        try:
            return row[0], json.loads(row[1])
        except ValueError as exc:
            raise damaged(self.path, f"a checkpoint of session {session_id}: {exc}") from None

    def checkpoint_lists(self, session_id: str, run_id: str) -> dict[str, bytes]:
        with self._guard():
            self._require(session_id)
            rows = self._db.execute(
                "SELECT list, item FROM checkpoint_items WHERE session_id = ? AND run_id = ?"
                " ORDER BY list, pos",
                (session_id, run_id),
            ).fetchall()
        items: dict[str, list[bytes]] = {}
        for name, item in rows:  # attachments stay references (`attachment_blobs`)
            items.setdefault(name, []).append(item)
        return {name: b"[" + b",".join(kept) + b"]" for name, kept in items.items()}

    # ---- file snapshots -----------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        # Imported here: OpenSSL loads with it (~4 ms), and `moot sessions list` stores no blob.
        import hashlib

        digest = hashlib.sha256(data).hexdigest()
        with self._guard():
            self._db.execute(
                "INSERT OR IGNORE INTO blobs (digest, data) VALUES (?, ?)", (digest, bytes(data))
            )
        return digest

    def get_blob(self, digest: str) -> bytes:
        with self._guard():
            row = self._db.execute("SELECT data FROM blobs WHERE digest = ?", (digest,)).fetchone()
        if row is None:
            raise KeyError(digest)
        return bytes(row[0])

    def attachment_data(self, digest: str) -> str:
        return self._blobs().base64(digest)

    def record_snapshot(self, session_id: str, run_id: str, path: str, digest: str | None) -> None:
        with self._guard():
            self._require(session_id)
            with transaction(self._db):
                if digest is not None:
                    known = self._db.execute(
                        "SELECT 1 FROM blobs WHERE digest = ?", (digest,)
                    ).fetchone()
                    if known is None:
                        raise KeyError(digest)
                # OR IGNORE: the first record of a path in a run is the one a rewind needs.
                self._db.execute(
                    "INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?)",
                    (session_id, run_id, path, digest),
                )

    def snapshots(self, session_id: str, run_id: str) -> dict[str, str | None]:
        with self._guard():
            self._require(session_id)
            rows = self._db.execute(
                "SELECT path, digest FROM snapshots WHERE session_id = ? AND run_id = ?"
                " ORDER BY path",
                (session_id, run_id),
            ).fetchall()
        return dict(rows)

    # ---- upkeep -------------------------------------------------------------------------------

    def delete_session(self, session_id: str) -> None:
        with self._guard():
            self._require(session_id)
            with transaction(self._db):
                for table in _PER_SESSION:
                    self._db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
                self._db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
                # Blobs are shared by hash: keep those another session's snapshots or
                # attachments still name.
                self._db.execute(
                    "DELETE FROM blobs WHERE digest NOT IN"
                    " (SELECT digest FROM snapshots WHERE digest IS NOT NULL)"
                    " AND digest NOT IN (SELECT digest FROM attachment_refs)"
                )
            self._logs.pop(session_id, None)

    def claim(self, session_id: str) -> SessionClaim:
        """Claim the session for one runtime: refused at once while another holds it.

        The claim is an OS lock, so it ends with its process however that ends; `close()`
        releases the claims taken through this store.

        Raises:
            SessionBusy: Another runtime (in any process) holds the session.
            UnknownSessionError: The store holds no such session.
            StoreError: The lock file cannot be made.
        """
        with self._guard():
            self._require(session_id)
        locks = self.path.with_name(self.path.name + "-locks")
        try:
            claim = claim_by_lock(locks, session_id)
        except OSError as exc:
            if exc.errno != errno.ENOLCK:
                raise from_os(exc, self.path) from None
            raise StoreError(
                f"cannot lock a file in {locks} (the file system takes no locks): set "
                f"MOOT_HOME to a directory on a local disk",
                self.path,
            ) from None
        self._claims.add(claim)
        return claim

    def close(self) -> None:
        self._wal.close()
        with self._lock:
            for claim in list(self._claims):
                claim.release()
            self._logs.clear()
            self._db.close()

    # ---- internals ----------------------------------------------------------------------------

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Hold the connection's lock; turn what SQLite raises into a `StoreError`."""
        with self._lock:
            try:
                yield
            except sqlite3.Error as exc:
                raise from_sqlite(exc, self.path, BUSY_TIMEOUT_S) from None

    def _packed(self, session_id: str, body: str | bytes) -> Any:
        from moot.store.attachment_blobs import packed_for  # the first append, not the opening

        return packed_for(self._db, session_id, body, self.put_blob)

    def _blobs(self) -> Unpacker:
        """What puts attachments back into the events read (made at the first read)."""
        if self._unpacker is None:
            from moot.store.attachment_blobs import Unpacker

            self._unpacker = Unpacker(self.get_blob)
        return self._unpacker

    def _unpacked(self, session_id: str, body: str | bytes) -> str | bytes:
        try:
            return self._blobs().unpack(body)
        except KeyError as exc:
            raise damaged(self.path, f"session {session_id} names a lost blob {exc}") from None

    def _decode(self, session_id: str, body: str) -> Event:
        from moot.protocol.events import event_from_json  # see the imports

        try:
            return event_from_json(self._unpacked(session_id, body))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise damaged(self.path, f"an event of session {session_id}: {exc}") from None

    def _require(self, session_id: str) -> None:
        if session_id in self._logs:
            return
        row = self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise UnknownSessionError(session_id)

    def _log(self, session_id: str) -> SessionLog:
        log = self._logs.get(session_id)
        if log is None:
            log = self._logs[session_id] = self._load_log(session_id)
        return log

    def _load_log(self, session_id: str) -> SessionLog:
        # Finished runs are only named (from `runs`); just the open run's events are replayed.
        with transaction(self._db, "BEGIN"):
            self._require(session_id)
            runs = self._db.execute(
                "SELECT run_id, finished_seq FROM runs WHERE session_id = ?", (session_id,)
            ).fetchall()
            (last_seq,) = self._db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()
            open_runs = [run_id for run_id, finished in runs if finished is None]
            bodies = self._db.execute(
                "SELECT body FROM events WHERE session_id = ?"
                f" AND run_id IN ({', '.join('?' * len(open_runs))}) ORDER BY seq",
                (session_id, *open_runs),
            ).fetchall()
        from moot.store.invariants import SessionLog

        return SessionLog.replay(
            session_id,
            (self._decode(session_id, body) for (body,) in bodies),
            finished_runs=[run_id for run_id, finished in runs if finished is not None],
            last_seq=last_seq,
        )
