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

import math
from collections.abc import Collection, Mapping

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


class Ranking(msgspec.Struct, frozen=True):
    """How much each file, and each definition, matters."""

    files: dict[str, float]
    """PageRank of each file; they sum to 1. Ordered best first, ties by path."""
    definitions: dict[tuple[str, str], float]
    """(file, name) to the rank that reached the file through references to that name."""


def rank_files(
    files: Mapping[str, FileTags],
    focus_files: Collection[str] = (),
    focus_names: Collection[str] = (),
) -> Ranking:
    """Rank files by how much the rest of the code references what they define.

    Args:
        files: Every mapped file's tags, by path.
        focus_files: Paths to rank higher (among `files`).
        focus_names: Names to weigh more; the files that define them count as focused too.
    """
    paths = list(files)
    # One table of definers per language family: a Go `Server` is not a Python `Server`.
    families: dict[str, dict[str, list[int]]] = {}
    top_level: set[str] = set()  # names some file defines outside any other definition
    for index, path in enumerate(paths):
        definers = families.setdefault(family(files[path].language), {})
        for name in {d.name for d in files[path].definitions}:
            definers.setdefault(name, []).append(index)
        top_level.update(d.name for d in files[path].definitions if d.parent < 0)
    focused = {index for index, path in enumerate(paths) if path in focus_files}
    for name in focus_names:
        for definers in families.values():
            owners = definers.get(name, ())
            if len(owners) <= MAX_DEFINERS:
                focused.update(owners)

    edges: list[dict[int, float]] = [{} for _ in paths]
    uses: list[tuple[int, str, float, list[int]]] = []  # (file, name, edge weight, definers)
    for source, path in enumerate(paths):
        out = edges[source]
        definers = families[family(files[path].language)]
        for name, count in files[path].references.items():
            found = definers.get(name)
            if found is None or len(found) > MAX_DEFINERS:
                continue
            owners = list(found)
            weight = math.sqrt(count) / len(owners)
            if name in focus_names:
                weight *= FOCUS_NAME_WEIGHT
            elif name.startswith("_"):
                weight *= PRIVATE_NAME_WEIGHT
            elif name not in top_level:
                weight *= MEMBER_NAME_WEIGHT
            for target in owners:
                out[target] = out.get(target, 0.0) + weight
            uses.append((source, name, weight, owners))
        out.pop(source, None)  # a file using its own names does not vouch for itself

    ranks = pagerank(edges, _personalization(len(paths), focused))
    order = sorted(range(len(paths)), key=lambda index: (-ranks[index], paths[index]))
    return Ranking(
        {paths[index]: ranks[index] for index in order},
        _definition_ranks(paths, edges, ranks, uses),
    )


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
    own: dict[tuple[int, str], float] = {}
    for source, name, weight, owners in uses:
        if totals[source] > 0:
            share = DAMPING * ranks[source] * weight / totals[source]
            key = id(owners)
            flow[key] = flow.get(key, 0.0) + share
            owners_of[key] = (name, owners)
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


def pagerank(edges: list[dict[int, float]], jump: list[float]) -> list[float]:
    """PageRank by power iteration, as networkx's `pagerank` computes it.

    Args:
        edges: For each node, its successors and the weight of each edge (> 0).
        jump: Where a random jump lands (the personalization vector); sums to 1. Nodes
            without edges out spread their rank the same way.

    Returns:
        Each node's rank; they sum to 1.
    """
    size = len(edges)
    if size == 0:
        return []
    # Edge weights normalised per node once, so an iteration is one multiply-add per edge.
    normalised: list[list[tuple[int, float]]] = []
    dangling: list[int] = []
    for node, out in enumerate(edges):
        total = sum(out.values())
        if total > 0:
            normalised.append([(target, weight / total) for target, weight in out.items()])
        else:
            normalised.append([])
            dangling.append(node)
    ranks = list(jump)
    for _ in range(_MAX_ITERATIONS):
        leaked = DAMPING * sum(ranks[node] for node in dangling)
        base = 1.0 - DAMPING + leaked
        following = [base * share for share in jump]
        for node, links in enumerate(normalised):
            if links:
                flow = DAMPING * ranks[node]
                for target, weight in links:
                    following[target] += flow * weight
        change = sum(abs(new - old) for new, old in zip(following, ranks, strict=True))
        ranks = following
        if change < size * _TOLERANCE:
            break
    return ranks
