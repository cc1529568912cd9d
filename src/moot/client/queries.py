"""`StoreQueries`: the read-only questions front ends ask about stored sessions.

They read the store and change nothing, so `moot sessions list` works while another process
runs a session in the same store.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from moot.protocol.client import CostLine, SessionSummary
from moot.store.base import SessionInfo, Store, UnknownSessionError

if TYPE_CHECKING:
    from moot.protocol.events import Event
    from moot.providers.catalog import CatalogEntry

LEDGER_SESSIONS = 100_000
"""Sessions `costs` reads at most (newest first)."""


class StoreQueries:
    """The `Queries` protocol over one store."""

    def __init__(
        self,
        store: Store,
        *,
        owns_store: bool = False,
        models: Mapping[str, CatalogEntry] | None = None,
        settings_env: Mapping[str, str] | None = None,
    ) -> None:
        """Args:
        store: The store to read.
        owns_store: `close` closes the store too.
        models: The settings' catalog entries, which price the cost ledger first.
        settings_env: The open session's settings' `env`, whose keys an export blanks with
            the process's; None: the exported session's own workspace settings are read.
        """
        self._store = store
        self._owns_store = owns_store
        self._models = models
        self._settings_env = settings_env

    def close(self) -> None:
        """Release the store, when these queries opened it (`open_queries`)."""
        if self._owns_store:
            self._store.close()

    def export(self, session_id: str, kind: str = "md") -> str:
        # Loaded here: only an export writes a transcript (json and msgspec's encoders load
        # with it), and `moot sessions list` is a start-up benchmark.
        from moot.frontend.transcript import render
        from moot.providers.credentials import known_keys

        summary = self.session(session_id)
        if summary is None:
            raise KeyError(f"no session {session_id!r}")
        settings_env = self._settings_env
        if settings_env is None:
            settings_env = _workspace_env(summary.workspace)
        keys = known_keys() | known_keys(settings_env, key_file=False)
        return render(kind, summary, self.events(session_id), keys)

    def sessions(self, *, workspace: str | None = None, limit: int = 50) -> list[SessionSummary]:
        infos = self._store.sessions(limit, workspace=workspace)
        totals = self._store.turn_totals([info.id for info in infos])
        return [_summary(info, *totals.get(info.id, (0, 0.0, 0))) for info in infos]

    def costs(
        self,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        workspace: str | None = None,
    ) -> list[CostLine]:
        from moot.client.ledger import KINDS, ledger_lines  # lazy: the catalog loads with it

        if session_id is not None:
            ids = [session_id]
        else:
            infos = self._store.sessions(LEDGER_SESSIONS, workspace=workspace)
            ids = [i.id for i in infos if since is None or i.updated_at >= since]
        lines: list[CostLine] = []
        for sid in ids:
            events = self.events(sid, kinds=KINDS)
            lines.extend(ledger_lines(sid, events, since=since, models=self._models))
        return lines

    def session(self, session_id: str) -> SessionSummary | None:
        info = self._store.session(session_id)
        if info is None:
            return None
        totals = self._store.turn_totals([session_id]).get(session_id, (0, 0.0, 0))
        return _summary(info, *totals)

    def events(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        before_seq: int | None = None,
        kinds: Collection[str] | None = None,
        limit: int | None = None,
        run_id: str | None = None,
    ) -> list[Event]:
        try:
            return self._store.events(
                session_id,
                after_seq=after_seq,
                before_seq=before_seq,
                kinds=kinds,
                limit=limit,
                run_id=run_id,
            )
        except UnknownSessionError:
            raise KeyError(f"no session {session_id!r}") from None


def _summary(info: SessionInfo, turns: int, cost_usd: float, tokens: int) -> SessionSummary:
    return SessionSummary(
        id=info.id,
        title=info.title,
        workspace=info.workspace,
        created_at=info.created_at,
        updated_at=info.updated_at,
        turns=turns,
        cost_usd=cost_usd,
        state=info.last_run_state,
        event_count=info.event_count,
        tokens=tokens,
    )


def _workspace_env(workspace: str) -> Mapping[str, str]:
    """The `env` of a workspace's settings (where a key may be kept); empty when they cannot
    be read (a removed workspace, a broken file: nothing more to blank)."""
    from pathlib import Path

    from moot.settings import SettingsError, load_settings

    if not workspace:
        return {}
    try:
        return load_settings(Path(workspace)).env
    except (SettingsError, OSError):
        return {}
