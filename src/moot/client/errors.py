"""What opening a session can go wrong with, as front ends see it."""

from __future__ import annotations


class SetupError(Exception):
    """The session cannot be set up as asked; the message says why (a usage error)."""
