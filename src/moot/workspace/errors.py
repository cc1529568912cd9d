"""What a file tool tells the model when something goes wrong: one line, naming the path."""

from __future__ import annotations

from moot.workspace.edits import EditFailed
from moot.workspace.ledger import FileStateError
from moot.workspace.no_follow import PathRefused
from moot.workspace.search import SearchError

FILE_ERRORS: tuple[type[Exception], ...] = (
    PathRefused,
    FileStateError,
    EditFailed,
    SearchError,
    OSError,
    UnicodeError,
    ValueError,
)
"""The failures a file tool answers with an error result rather than letting escape."""


def describe(exc: Exception, path: str) -> str:
    """A message for the model about `exc`, which happened while working on `path`.

    Args:
        exc: One of `FILE_ERRORS`.
        path: The path as the model gave it.
    """
    if isinstance(exc, PathRefused):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such file or directory"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a directory (ls lists it)"
    if isinstance(exc, NotADirectoryError):
        return f"{path}: not a directory (or a parent of it is a file)"
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied"
    if isinstance(exc, UnicodeError):
        return f"{path}: not valid text in its encoding ({exc})"
    if isinstance(exc, OSError):
        return f"{path}: {exc.strerror or exc}"
    return f"{path}: {exc}"
