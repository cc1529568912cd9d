"""`PathIndex` (what `@path` completion ranks with) answers exactly what the plain scan,
`fuzzy_rank`, answers, whichever way it narrows the paths first (issue 31)."""

from __future__ import annotations

import random

from moot.frontend import fuzzy
from moot.frontend.fuzzy import PathIndex, fuzzy_rank

_PARTS = ["src", "pkg", "a", "ab", "Lib", "tests", "x_y", "mod", "ü", "data", "b-2", "q"]
_NAMES = ["a.py", "ab.py", "b.txt", "Mod_1.py", "pkg.go", "qa", "x", "üa.md", "readme", "zz.c"]


def _paths(rng: random.Random, count: int) -> list[str]:
    paths = set()
    while len(paths) < count:
        depth = rng.randrange(0, 5)
        parts = [rng.choice(_PARTS) + str(rng.randrange(3)) for _ in range(depth)]
        paths.add("/".join([*parts, str(rng.randrange(20)) + rng.choice(_NAMES)]))
    return sorted(paths, key=lambda _: rng.random())


def _typed(rng: random.Random, paths: list[str]) -> str:
    """What someone types for a path: characters of it in order, a few of them capitals, or
    now and then some character of no path at all."""
    path = rng.choice(paths)
    kept = [char for char in path if rng.random() < 0.35] or [path[0]]
    if rng.random() < 0.1:
        kept.insert(rng.randrange(len(kept) + 1), rng.choice("kZ@"))
    return "".join(char.upper() if rng.random() < 0.1 else char for char in kept)


def test_the_ranking_is_the_plain_scans_for_random_needles_typed_key_by_key() -> None:
    rng = random.Random(31)
    for round_ in range(6):
        paths = _paths(rng, rng.choice([50, 400, 3000]))
        index = PathIndex(paths)
        for _ in range(40):
            typed = _typed(rng, paths)
            limit = rng.choice([1, 5, 30, 10_000])
            for end in range(1, len(typed) + 1):  # key by key: narrowing from the last
                needle = typed[:end]
                assert index.rank(needle, limit) == fuzzy_rank(needle, paths, limit), (
                    round_,
                    needle,
                    limit,
                )
            needle = typed[rng.randrange(len(typed)) :]  # anew: not extending the last
            assert index.rank(needle, limit) == fuzzy_rank(needle, paths, limit)


def test_few_candidates_are_checked_one_by_one_and_many_read_in_c() -> None:
    paths = [f"dir{n % 50}/file_{n:06}.py" for n in range(fuzzy.FEW + 10)] + ["deep/quirky_name.js"]
    index = PathIndex(paths)
    assert index.rank("f", 3) == fuzzy_rank("f", paths, 3)
    assert index.checked is None  # every path holds an `f`: the text is read in C
    assert index.rank("qjs", 3) == ["deep/quirky_name.js"]
    assert index.checked == 1  # only one path holds a `q`, a `j` and an `s`


def test_a_needle_extending_the_last_is_checked_among_its_matches_only() -> None:
    paths = [f"pkg{n % 100}/mod_{n:06}.py" for n in range(100_000)]
    index = PathIndex(paths)
    first = index.rank("pkg7mod_0000", 100_000)
    assert first == fuzzy_rank("pkg7mod_0000", paths, 100_000)
    assert 0 < len(first) < 1_000
    extended = index.rank("pkg7mod_00007", 100_000)
    assert extended == fuzzy_rank("pkg7mod_00007", paths, 100_000)
    assert index.checked == len(first)  # narrowed from the last key's matches
    index.rank("zzz", 5)
    index.rank("pkg7mod_00007", 5)
    assert index.checked != len(first)  # not extending what was typed last: narrowed anew
