"""What is moot's or git's own in a workspace: `.moot/` at the top, `.git` anywhere.

File tools never write there without the person's approval, and the sandbox keeps it
read-only. A module of its own so that both the path policy and moot's host git read it.
"""

from __future__ import annotations

DEFAULT_PROTECTED: tuple[str, ...] = (".git", ".moot")
"""What the sandbox keeps read-only by default (`SandboxPolicy.protected`); a caller that
protects more adds to it."""
_PROTECTED_ANYWHERE = frozenset({".git"})
"""Names protected at any depth: a repository's internals (hooks run code)."""
_PROTECTED_AT_TOP = frozenset({".moot"})


def is_protected(parts: tuple[str, ...]) -> bool:
    """Whether a workspace-relative path is moot's or git's own (`.moot/` at the top, `.git`
    anywhere): writes there always ask."""
    # casefold: on case-insensitive file systems `.GIT/hooks` is `.git/hooks`.
    folded = [part.casefold() for part in parts]
    return folded[0] in _PROTECTED_AT_TOP or any(p in _PROTECTED_ANYWHERE for p in folded)
