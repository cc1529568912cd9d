"""Sessions and their event logs: the `Store` seam and its SQLite and in-memory implementations.

The implementations import msgspec and SQLite (through `moot.protocol`), so they are loaded on
first use; importing this package costs only the standard library.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from moot.store.base import SessionInfo, Store, UnknownSessionError

if TYPE_CHECKING:
    from moot.store.claims import SessionBusy, SessionClaim
    from moot.store.errors import StoreError
    from moot.store.invariants import EventInvariantError, SessionLog
    from moot.store.memory import MemoryStore
    from moot.store.sqlite import SQLiteStore

__all__ = [
    "EventInvariantError",
    "MemoryStore",
    "SQLiteStore",
    "SessionBusy",
    "SessionClaim",
    "SessionInfo",
    "SessionLog",
    "Store",
    "StoreError",
    "UnknownSessionError",
    "open_store",
]

_LAZY = {
    "EventInvariantError": "moot.store.invariants",
    "SessionLog": "moot.store.invariants",
    "MemoryStore": "moot.store.memory",
    "SQLiteStore": "moot.store.sqlite",
    "SessionBusy": "moot.store.claims",
    "SessionClaim": "moot.store.claims",
    "StoreError": "moot.store.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def open_store(path: str | os.PathLike[str] | None = None) -> SQLiteStore:
    """Open the sessions database.

    Args:
        path: The database file; `moot.paths.default_db_path()` when None.

    Raises:
        StoreError: It cannot be opened as moot's database; the message says what to do.
    """
    from moot.paths import PRIVATE_DIR, default_db_path, keep_private
    from moot.store.sqlite import SQLiteStore

    if path is None:
        path = default_db_path()
        # The data directory an older moot made 0755: only this user's from now on.
        keep_private(path.parent, PRIVATE_DIR)
    return SQLiteStore(path)
