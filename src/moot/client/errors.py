"""What opening or using a session can go wrong with, as front ends see it.

`StoreError` (the sessions database cannot be used: damaged, read-only, a full disk) and
`SessionBusy` (another moot runs this session) are the store's; front ends catch them from
here, since they may not import the store.
"""

from __future__ import annotations

from moot.store.claims import SessionBusy
from moot.store.errors import StoreError

__all__ = ["SessionBusy", "SetupError", "StoreError"]


class SetupError(Exception):
    """The session cannot be set up as asked; the message says why (a usage error)."""
