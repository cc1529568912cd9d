"""A store that keeps everything in memory: for tests, demos and library use without a file."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec
from msgspec.structs import replace

from moot.protocol.events import Event, SessionRenamed, TurnFinished, TurnStarted
from moot.protocol.ids import new_id
from moot.protocol.titles import title_of
from moot.store.base import ListTail, SessionInfo, UnknownSessionError, as_utc
from moot.store.claims import ClaimTable, SessionClaim
from moot.store.invariants import SessionLog, check_schema


class _Session(msgspec.Struct):
    id: str
    title: str
    workspace: str
    created_at: datetime
    log: SessionLog
    events: list[Event] = msgspec.field(default_factory=list)
    """The log; `events[i].seq == i + 1`."""
    last_state: str | None = None
    checkpoints: dict[str, dict[int, str]] = msgspec.field(default_factory=dict)
    """run id -> seq -> the data as JSON, so callers never share mutable state with the store."""
    lists: dict[str, dict[str, list[bytes]]] = msgspec.field(default_factory=dict)
    """run id -> the lists its checkpoint keeps item by item, each item as JSON."""
    turns: int = 0
    """Runs begun (`turn_totals`, kept as events are appended)."""
    cost_usd: float = 0.0
    """What the finished runs cost."""
    tokens: int = 0
    """The tokens the finished runs read and wrote."""
    snapshots: dict[str, dict[str, str | None]] = msgspec.field(default_factory=dict)
    """run id -> path -> digest of the content before the run changed it (None: absent)."""

    def info(self) -> SessionInfo:
        updated_at = as_utc(self.events[-1].ts) if self.events else self.created_at
        return SessionInfo(
            id=self.id,
            title=self.title,
            workspace=self.workspace,
            created_at=self.created_at,
            updated_at=updated_at,
            event_count=len(self.events),
            last_run_state=self.last_state,
        )


class MemoryStore:
    """The `Store` contract held in memory, with the same rules as `SQLiteStore`."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._blobs: dict[str, bytes] = {}
        # Appends from several threads (tools run in worker threads) must not interleave.
        self._lock = threading.Lock()
        self._claims = ClaimTable()

    def create_session(
        self, *, title: str = "", workspace: str = "", session_id: str | None = None
    ) -> SessionInfo:
        session_id = session_id or new_id("ses")
        with self._lock:
            if session_id in self._sessions:
                raise ValueError(f"session {session_id!r} exists")
            session = _Session(
                id=session_id,
                title=title,
                workspace=workspace,
                created_at=datetime.now(UTC),
                log=SessionLog(session_id),
            )
            self._sessions[session_id] = session
            return session.info()

    def session(self, session_id: str) -> SessionInfo | None:
        with self._lock:
            session = self._sessions.get(session_id)
            return session.info() if session else None

    def sessions(self, limit: int = 50, *, workspace: str | None = None) -> list[SessionInfo]:
        with self._lock:
            infos = [
                s.info()
                for s in self._sessions.values()
                if workspace is None or s.workspace == workspace
            ]
        infos.sort(key=lambda info: (info.updated_at, info.id), reverse=True)
        return infos[:limit]

    def append(self, event: Event) -> Event:
        with self._lock:
            session = self._get(event.session_id)
            # As SQLite does: rule f first, then the others on the event as it reads back.
            _, stored = check_schema(replace(event, seq=session.log.next_seq))
            session.log.check(stored)
            session.events.append(stored)
            session.log.record(stored)
            if isinstance(stored, TurnStarted):
                session.last_state = "running"
                session.title = session.title or title_of(stored.prompt)
                session.turns += 1
            elif isinstance(stored, SessionRenamed):
                session.title = stored.title
            elif isinstance(stored, TurnFinished):
                session.last_state = str(stored.state)
                session.cost_usd += stored.cost_usd
                session.tokens += stored.usage.input_tokens + stored.usage.output_tokens
            return stored

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
        if isinstance(kinds, str):
            kinds = {kinds}
        with self._lock:
            events = self._get(session_id).events
            tail = events[max(after_seq, 0) : None if before_seq is None else before_seq - 1]
        chosen = [
            e
            for e in tail
            if (run_id is None or e.run_id == run_id) and (kinds is None or e.kind in kinds)
        ]
        return chosen if limit is None else chosen[max(len(chosen) - limit, 0) :]

    def turn_totals(self, session_ids: Collection[str]) -> dict[str, tuple[int, float, int]]:
        with self._lock:
            found = {sid: self._sessions.get(sid) for sid in session_ids}
            return {
                sid: (s.turns, s.cost_usd, s.tokens) if s else (0, 0.0, 0)
                for sid, s in found.items()
            }

    def open_run(self, session_id: str) -> str | None:
        with self._lock:
            return self._get(session_id).log.open_run_id

    def save_checkpoint(
        self,
        session_id: str,
        run_id: str,
        seq: int,
        data: dict[str, Any],
        lists: Mapping[str, ListTail] | None = None,
    ) -> bool:
        text = json.dumps(data)
        with self._lock:
            session = self._get(session_id)
            by_seq = session.checkpoints.setdefault(run_id, {})
            if any(seq < kept for kept in by_seq):
                return False
            kept_lists = session.lists.setdefault(run_id, {})
            for name, tail in (lists or {}).items():
                if tail.start > len(kept_lists.get(name, ())):
                    raise ValueError(f"the checkpoint keeps fewer than {tail.start} of {name}")
            for name, tail in (lists or {}).items():
                items = kept_lists.setdefault(name, [])
                del items[tail.start :]
                items.extend(map(bytes, tail.items))
            by_seq.clear()  # only the newest is ever read
            by_seq[seq] = text
            return True

    def latest_checkpoint(self, session_id: str, run_id: str) -> tuple[int, dict[str, Any]] | None:
        with self._lock:
            by_seq = self._get(session_id).checkpoints.get(run_id)
            if not by_seq:
                return None
            seq = max(by_seq)
            return seq, json.loads(by_seq[seq])

    def checkpoint_lists(self, session_id: str, run_id: str) -> dict[str, bytes]:
        with self._lock:
            kept = self._get(session_id).lists.get(run_id, {})
            return {name: b"[" + b",".join(items) + b"]" for name, items in kept.items()}

    def put_blob(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            self._blobs.setdefault(digest, bytes(data))
        return digest

    def get_blob(self, digest: str) -> bytes:
        with self._lock:
            return self._blobs[digest]

    def attachment_data(self, digest: str) -> str:
        # Events here keep their base64: nothing names a blob unless a caller stored one.
        import base64

        return base64.b64encode(self.get_blob(digest)).decode()

    def record_snapshot(self, session_id: str, run_id: str, path: str, digest: str | None) -> None:
        with self._lock:
            session = self._get(session_id)
            if digest is not None and digest not in self._blobs:
                raise KeyError(digest)
            session.snapshots.setdefault(run_id, {}).setdefault(path, digest)

    def snapshots(self, session_id: str, run_id: str) -> dict[str, str | None]:
        with self._lock:
            return dict(sorted(self._get(session_id).snapshots.get(run_id, {}).items()))

    def delete_session(self, session_id: str) -> None:
        with self._lock:
            self._get(session_id)
            del self._sessions[session_id]
            kept = {
                digest
                for other in self._sessions.values()
                for paths in other.snapshots.values()
                for digest in paths.values()
                if digest is not None
            }
            self._blobs = {d: data for d, data in self._blobs.items() if d in kept}

    def claim(self, session_id: str) -> SessionClaim:
        with self._lock:
            self._get(session_id)
        return self._claims.claim(session_id)

    def close(self) -> None:
        """Nothing to release; the sessions stay readable (and claimed while claimed)."""

    def _get(self, session_id: str) -> _Session:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSessionError(session_id) from None
