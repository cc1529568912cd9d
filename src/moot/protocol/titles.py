"""Session titles: what a session is called in lists, without asking a model."""

from __future__ import annotations

TITLE_LENGTH = 80
"""Titles are cut to this many characters."""


def title_of(prompt: str) -> str:
    """The title a first prompt gives an untitled session: its first non-blank line, its
    whitespace collapsed, cut to `TITLE_LENGTH`."""
    for line in prompt.splitlines():
        words = " ".join(line.split())
        if words:
            return words[:TITLE_LENGTH]
    return ""
