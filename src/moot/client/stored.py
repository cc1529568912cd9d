"""Opening the sessions database without opening a session: read-only queries
(`open_queries`) and upkeep (`open_upkeep`).

Kept apart from `moot.client.local`, which assembles whole sessions (runtime, providers, tools),
so that `moot sessions list` loads none of that: it is a start-up benchmark (<= 100 ms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.client.queries import StoreQueries

if TYPE_CHECKING:
    from moot.client.upkeep import SessionUpkeep


def open_queries() -> StoreQueries:
    """Read-only queries over the sessions database, for front ends with no session open
    (`moot sessions list`); `close()` them when done."""
    from moot.store import open_store

    return StoreQueries(open_store(), owns_store=True)


def open_upkeep() -> SessionUpkeep:
    """Delete, fork and prune stored sessions (`moot sessions delete | fork | prune`);
    `close()` it when done."""
    from moot.client.upkeep import SessionUpkeep
    from moot.store import open_store

    return SessionUpkeep(open_store(), owns_store=True)
