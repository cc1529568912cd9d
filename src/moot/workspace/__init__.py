"""The workspace: the directory the file tools work in, and the one policy that bounds them.

`Workspace` checks every path a tool is given (`paths.py`), remembers what the session read
(`ledger.py`), and writes files atomically through descriptors that never follow a symlink
(`no_follow.py`); `walk.py`, `ignore.py` and `search.py` list and search it the way a person's
git-aware tools would; `git.py` runs moot's git on the host, `agent_commits.py` commits the
agent's files and takes such a commit back.
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
