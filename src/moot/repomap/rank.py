"""Which files matter most: PageRank over "file A references a name file B defines".

Each reference adds weight to the edge A -> B: the square root of how often A uses the name
(so one file calling a helper fifty times does not drown out fifty files calling it once),
shared among the files that define the name. Names link files of one language family only.
Names defined in very many files (`run`, `get`) say little about which file is meant and are
left out; names private by convention (`_helper`) count a tenth, and so do names defined only
as members (methods), since `x.items()` may call a dict's `items` as well as some class's.
The ranks then flow along the edges, so a file used by important files is important too. A
focus (files, or names, from the conversation) tilts the random jump of PageRank toward those
files, and multiplies references to focused names by ten.

PageRank is written out here rather than taken from networkx for start-up weight: networkx is
a large package whose import would land on the first map of every session (and on the
install) for the sake of one function, while this power iteration costs nothing to import."""

from __future__ import annotations

import contextlib
import gc
import math
import sys
from collections.abc import Collection, Iterator, Mapping
from itertools import compress
from typing import NamedTuple

import msgspec

from moot.repomap.languages import family
from moot.repomap.tags import FileTags

DAMPING = 0.85
"""Chance of following an edge rather than jumping; the usual PageRank value."""
FOCUS_SHARE = 0.5
"""Share of the random jump that lands on focused files when there are some."""
FOCUS_NAME_WEIGHT = 10.0
PRIVATE_NAME_WEIGHT = 0.1
MEMBER_NAME_WEIGHT = 0.1
"""For names defined only inside other definitions (methods): tags do not know the type of
`x` in `x.items()`, which may as well be a dict's as the `items` of some class here."""
MAX_DEFINERS = 30
"""A name defined in more files than this ties no file to any other."""
_TOLERANCE = 1e-6
_MAX_ITERATIONS = 100


class RankFacts(NamedTuple):
    """What ranking reads of one file (`facts_of`), its names interned so that files share
    them: a session holds these for every source file, the full tags only on disk."""

    language: str
    defined: tuple[str, ...]
    """The names it defines, once each."""
    top_level: tuple[str, ...]
    """Those of them it defines outside any other definition."""
    referenced: tuple[str, ...]
    """The names it references, once each."""
    counts: tuple[int, ...]
    """How many places reference each of `referenced`."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Hold CPython's cyclic collector off while a map builds its graph or takes in tags.

    Building a 60,000-file graph allocates about a million lists, dicts and tuples that all
    live until the ranking ends: the collector, run every 700 allocations, scans them again
    and again, and ranking took 2.9 s instead of 1.0 s. Nothing made here is garbage in a
    cycle, and the collector runs again (if it was on) as soon as this ends.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def facts_of(tags: FileTags) -> RankFacts:
    """The facts ranking reads of a file's tags."""
    intern = sys.intern
    definitions = tags.definitions
    return RankFacts(
        intern(tags.language),
        tuple(dict.fromkeys(intern(d.name) for d in definitions)),
        tuple(dict.fromkeys(intern(d.name) for d in definitions if d.parent < 0)),
        tuple(map(intern, tags.references)),
        tuple(tags.references.values()),
    )


class Ranking(msgspec.Struct, frozen=True):
    """How much each file, and each definition, matters."""

    files: dict[str, float]
    """PageRank of each file; they sum to 1. Ordered best first, ties by path."""
    definitions: dict[tuple[str, str], float]
    """(file, name) to the rank that reached the file through references to that name."""


def rank_files(
    files: Mapping[str, FileTags | RankFacts],
    focus_files: Collection[str] = (),
    focus_names: Collection[str] = (),
    *,
    start: Mapping[str, float] | None = None,
) -> Ranking:
    """Rank files by how much the rest of the code references what they define.

    Args:
        files: Every mapped file's tags (or their `RankFacts`), by path.
        focus_files: Paths to rank higher (among `files`).
        focus_names: Names to weigh more; the files that define them count as focused too.
        start: Ranks to start the iteration from (an earlier ranking of about the same
            files): it then converges in a few rounds. The result does not depend on it.
    """
    with collector_paused():
        return _rank(files, focus_files, focus_names, start)


def _rank(
    files: Mapping[str, FileTags | RankFacts],
    focus_files: Collection[str],
    focus_names: Collection[str],
    start: Mapping[str, float] | None,
) -> Ranking:
    paths = list(files)
    facts = [f if isinstance(f, RankFacts) else facts_of(f) for f in files.values()]
    # One table of definers per language family: a Go `Server` is not a Python `Server`.
    families: dict[str, dict[str, list[int]]] = {}
    top_level: set[str] = set()  # names some file defines outside any other definition
    for index, fact in enumerate(facts):
        definers = families.setdefault(family(fact.language), {})
        for name in fact.defined:
            owners = definers.get(name)
            if owners is None:
                definers[name] = [index]
            else:
                owners.append(index)
        top_level.update(fact.top_level)
    focused = {index for index, path in enumerate(paths) if path in focus_files}
    for definers in families.values():
        for name in [name for name, owners in definers.items() if len(owners) > MAX_DEFINERS]:
            del definers[name]  # names that say nothing of which file is meant
        for name in focus_names:
            focused.update(definers.get(name, ()))

    # Per (family, name): its definers and what one reference to it weighs, made once.
    units: dict[str, dict[str, tuple[list[int], float]]] = {
        language: {
            name: (owners, _name_weight(name, focus_names, top_level) / len(owners))
            for name, owners in definers.items()
        }
        for language, definers in families.items()
    }
    edges: list[dict[int, float]] = [{} for _ in paths]
    uses: list[tuple[int, str, float, list[int]]] = []  # (file, name, edge weight, definers)
    for source, fact in enumerate(facts):
        out = edges[source]
        named = units[family(fact.language)]
        names = fact.referenced
        # Only the names some file defines, picked in C: most references are not (`self`).
        for name, count in compress(
            zip(names, fact.counts, strict=True), map(named.__contains__, names)
        ):
            owners, unit = named[name]  # one list per (family, name): see `_definition_ranks`
            weight = unit * (_ROOTS[count] if count < len(_ROOTS) else math.sqrt(count))
            for target in owners:
                out[target] = out.get(target, 0.0) + weight
            uses.append((source, name, weight, owners))
        out.pop(source, None)  # a file using its own names does not vouch for itself

    first = None
    if start:
        first = [start.get(path, 0.0) for path in paths]
        total = sum(first)
        first = [rank / total for rank in first] if total > 0 else None
    ranks = pagerank(edges, _personalization(len(paths), focused), first)
    order = sorted(range(len(paths)), key=lambda index: (-ranks[index], paths[index]))
    return Ranking(
        {paths[index]: ranks[index] for index in order},
        _definition_ranks(paths, edges, ranks, uses),
    )


_ROOTS = [math.sqrt(count) for count in range(64)]
"""Square roots of the reference counts most names have."""


def _name_weight(name: str, focus_names: Collection[str], top_level: set[str]) -> float:
    """What a reference to `name` weighs before its count and its definers share it."""
    if name in focus_names:
        return FOCUS_NAME_WEIGHT
    if name.startswith("_"):
        return PRIVATE_NAME_WEIGHT
    if name not in top_level:
        return MEMBER_NAME_WEIGHT
    return 1.0


def _definition_ranks(
    paths: list[str],
    edges: list[dict[int, float]],
    ranks: list[float],
    uses: list[tuple[int, str, float, list[int]]],
) -> dict[tuple[str, str], float]:
    """The rank each (file, name) receives along the edges that references to the name made.

    A use of a name sends the same share of the user's rank to every file that defines it
    (but the user itself), so the flow into (file, name) is the name's total flow less what
    the file sends itself: one pass over the uses instead of one per edge.
    """
    totals = [sum(out.values()) for out in edges]
    flow: dict[int, float] = {}  # by id() of the definers list: one per (family, name)
    owners_of: dict[int, tuple[str, list[int]]] = {}
    own: dict[tuple[int, str], float] = {}  # what a file sends a name it defines itself
    for source, name, weight, owners in uses:
        total = totals[source]
        if total > 0:
            share = DAMPING * ranks[source] * weight / total
            key = id(owners)
            if key in flow:
                flow[key] += share
            else:
                flow[key] = share
                owners_of[key] = (name, owners)
            if source in owners:
                own[(source, name)] = share
    definitions: dict[tuple[str, str], float] = {}
    for key, total in flow.items():
        name, owners = owners_of[key]
        for owner in owners:
            received = total - own.get((owner, name), 0.0)
            if received > 0:
                definitions[(paths[owner], name)] = received
    return definitions


def _personalization(size: int, focused: Collection[int]) -> list[float]:
    if not focused or len(focused) == size:
        return [1.0 / size] * size if size else []
    jump = [(1.0 - FOCUS_SHARE) / size] * size
    for index in focused:
        jump[index] += FOCUS_SHARE / len(focused)
    return jump


def pagerank(
    edges: list[dict[int, float]], jump: list[float], start: list[float] | None = None
) -> list[float]:
    """PageRank by power iteration, as networkx's `pagerank` computes it.

    Args:
        edges: For each node, its successors and the weight of each edge (> 0).
        jump: Where a random jump lands (the personalization vector); sums to 1. Nodes
            without edges out spread their rank the same way.
        start: Ranks to start from (summing to 1); `jump` when None.

    Returns:
        Each node's rank; they sum to 1.
    """
    size = len(edges)
    if size == 0:
        return []
    # Each node's share of DAMPING per unit of edge weight, once: an iteration is then one
    # multiply-add per edge, over the edges as they are (no normalised copy to build).
    totals = [sum(out.values()) for out in edges]
    linked = [
        (node, out, DAMPING / total)
        for node, (out, total) in enumerate(zip(edges, totals, strict=True))
        if total > 0
    ]
    dangling = [node for node, total in enumerate(totals) if total <= 0]
    ranks = list(jump if start is None else start)
    for _ in range(_MAX_ITERATIONS):
        leaked = DAMPING * sum(ranks[node] for node in dangling)
        base = 1.0 - DAMPING + leaked
        following = [base * share for share in jump]
        for node, out, scale in linked:
            flow = ranks[node] * scale
            for target, weight in out.items():
                following[target] += flow * weight
        change = sum(abs(new - old) for new, old in zip(following, ranks, strict=True))
        ranks = following
        if change < size * _TOLERANCE:
            break
    return ranks
