"""Fuzzy ranking of paths, for `@path` completion in the app and the REPL alike."""

from __future__ import annotations

from collections.abc import Iterable


def fuzzy_match(needle: str, haystack: str) -> bool:
    """Every character of `needle`, in order, somewhere in `haystack` (case-insensitive)."""
    position = 0
    hay = haystack.lower()
    for char in needle.lower():
        position = hay.find(char, position)
        if position < 0:
            return False
        position += 1
    return True


def fuzzy_rank(needle: str, paths: Iterable[str], limit: int) -> list[str]:
    """The first `limit` paths that match `needle`, the best first: the needle whole in the
    file name, then spread over the file name, then whole in the path, then spread over it;
    shorter names and paths first."""
    name = needle.lower()

    def score(path: str) -> tuple[int, int, int]:
        base = path.rsplit("/", 1)[-1].lower()
        if name in base:
            rank = 0
        elif fuzzy_match(name, base):
            rank = 1
        else:
            rank = 2 if name in path.lower() else 3
        return (rank, len(base), len(path))

    return sorted((p for p in paths if fuzzy_match(needle, p)), key=score)[:limit]
