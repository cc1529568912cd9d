"""The workspace: the directory the file tools work in, and the one policy that bounds them.

`Workspace` checks every path a tool is given (`paths.py`), remembers what the session read
(`ledger.py`), and writes files atomically; `walk.py`, `ignore.py` and `search.py` list and
search it the way a person's git-aware tools would.
"""

from moot.workspace.ledger import FileStateError, NotReadError, ReadLedger, StaleFileError
from moot.workspace.no_follow import AtomicWriter, PathRefused
from moot.workspace.paths import Workspace

__all__ = [
    "AtomicWriter",
    "FileStateError",
    "NotReadError",
    "PathRefused",
    "ReadLedger",
    "StaleFileError",
    "Workspace",
]
