"""The map as text within a token budget: ranked files, each with its top declarations.

    pkg/core.py:
    ⋮
    │class Config:
    │    def load(self, path: str) -> dict[str, object]:
    ⋮
    │def helper(value):
    ⋮

Files come best first; under each path its chosen declarations in file order, each with the
declarations it sits in (a method's class), `⋮` where lines are left out. Which declarations
are chosen: those that the rest of the code references, by the rank that reached them through
those references; then the others, file by file in rank order; then files that define nothing.
As many as fit are shown, found by binary search on that list, with tokens estimated as
characters / 4.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping

from moot.repomap.rank import Ranking
from moot.repomap.tags import FileTags

CHARS_PER_TOKEN = 4
ELIDED = "⋮"
CODE = "│"

_Item = tuple[str, int]
"""A file and the index of one of its definitions; -1 for the file alone."""


def estimate_tokens(text: str) -> int:
    """Tokens in `text`, estimated as characters / 4, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def render_map(files: Mapping[str, FileTags], ranking: Ranking, tokens: int) -> tuple[str, int]:
    """The largest map whose estimated tokens are within `tokens`.

    Args:
        files: The tags of every mapped file.
        ranking: Their ranks.
        tokens: The budget.

    Returns:
        The text (empty when not even one file fits) and how many files it shows.
    """
    # Every item adds at least one character, so more than this many can never fit.
    items: list[_Item] = []
    for item in _ranked_items(files, ranking, tokens * CHARS_PER_TOKEN):
        items.append(item)
        if len(items) >= tokens * CHARS_PER_TOKEN:
            break
    order = {path: position for position, path in enumerate(ranking.files)}
    fits, best = 0, ("", 0)
    low, high = 1, len(items)
    while low <= high:  # the largest prefix of `items` that fits; longer prefixes never shrink
        middle = (low + high) // 2
        text, shown = _render(files, items[:middle], order)
        if estimate_tokens(text) <= tokens:
            fits, best = middle, (text, shown)
            low = middle + 1
        else:
            high = middle - 1
    return best if fits else ("", 0)


def _ranked_items(files: Mapping[str, FileTags], ranking: Ranking, most: int) -> Iterator[_Item]:
    """The items in the order they are shown; `most` are ever read (each referenced
    definition gives one at least, so the `most` best of them are enough to sort)."""
    file_rank = ranking.files
    referenced = heapq.nsmallest(
        most,
        ranking.definitions.items(),
        key=lambda entry: (-entry[1], -file_rank[entry[0][0]], entry[0]),
    )
    seen: set[_Item] = set()
    by_name: dict[str, dict[str, list[int]]] = {}  # built only for files that get this far
    for (path, name), _ in referenced:
        names = by_name.get(path)
        if names is None:
            names = by_name[path] = {}
            for index, definition in enumerate(files[path].definitions):
                names.setdefault(definition.name, []).append(index)
        for index in names.get(name, ()):
            seen.add((path, index))
            yield path, index
    for path in file_rank:
        definitions = files[path].definitions
        for index in range(len(definitions)):
            if (path, index) not in seen:
                yield path, index
    for path in file_rank:
        if not files[path].definitions:
            yield path, -1


def _render(
    files: Mapping[str, FileTags], items: list[_Item], order: Mapping[str, int]
) -> tuple[str, int]:
    chosen: dict[str, set[int]] = {}
    for path, index in items:
        shown = chosen.setdefault(path, set())
        definitions = files[path].definitions
        while index >= 0 and index not in shown:  # the definition and those it sits in
            shown.add(index)
            index = definitions[index].parent
    out: list[str] = []
    for path in sorted(chosen, key=order.__getitem__):
        out.append(f"{path}:")
        tags = files[path]
        previous = 0
        for index in sorted(chosen[path]):
            definition = tags.definitions[index]
            if definition.line == previous:
                continue  # two definitions on one line: the line is shown once
            if definition.line > previous + 1:
                out.append(ELIDED)
            out.append(CODE + definition.signature)
            previous = definition.line
        if chosen[path] and previous < tags.lines:
            out.append(ELIDED)
    return "\n".join(out) + "\n" if out else "", len(chosen)
