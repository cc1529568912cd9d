"""Repository map build time over a generated Python tree, cold (empty cache) and warm.

The tree is 2,000 modules (`--quick`: 300) in packages of 40, plus their `__init__.py` files.
Each module imports names from up to five others (skewed: a few modules are imported far more
often than the rest, as real code has its `core.py`), and has constants, one to three classes
with annotated methods that call what was imported, and plain functions: 100 to 230 lines,
about 150 (6 KB) on average. Method names repeat across classes (`load`, `save`, ...), and some
function names across modules, as in real code. "Cold" is the first map of the tree with an
empty cache: every file is read and parsed. "Warm" is the same call again: nothing changed, so
nothing is parsed; the walk, the cache read, the ranking and the rendering remain. Both run in
this process, with a 1,024-token budget; the first import of tree-sitter falls in the cold run.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from moot.repomap import build_repo_map
from report import Row, ms, table
from timing import median

NAME = "repomap"
TARGET = "cold <= 4 s, warm <= 0.3 s"
_COLD_TARGET = "<= 4 s"
_WARM_TARGET = "<= 0.3 s"
_PACKAGE_SIZE = 40

# Word lists read better as strings than as one-word-a-line lists.
_NOUNS = (  # noqa: SIM905
    "Order Invoice Customer Session Cache Router Parser Report Account Ledger Payment Token "
    "Schedule Catalog Shipment Profile Document Channel Message Queue Policy Record Bundle "
    "Upload Metric Budget Template Contract Warehouse Ticket"
).split()
_ROLES = "Service Store Builder Client Handler Manager View Loader Index".split()  # noqa: SIM905
_QUALIFIERS = "items batch summary total state index config draft".split()  # noqa: SIM905
_VERBS = (  # noqa: SIM905
    "load save validate render compute update create delete find merge apply export "
    "refresh resolve parse format"
).split()


def _module_name(index: int) -> str:
    return f"app.pkg{index // _PACKAGE_SIZE:03}.mod{index % _PACKAGE_SIZE:02}"


def _module_path(index: int) -> str:
    return _module_name(index).replace(".", "/") + ".py"


def _exports(index: int, rng: random.Random) -> tuple[list[str], list[str]]:
    """The classes and functions module `index` defines (deterministic per module)."""
    classes = [f"{rng.choice(_NOUNS)}{rng.choice(_ROLES)}{index}" for _ in range(rng.randint(1, 3))]
    functions = [
        f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS).lower()}_{rng.choice(_QUALIFIERS)}"
        for _ in range(rng.randint(2, 5))
    ]
    return classes, sorted(set(functions))


def _module(
    index: int, exports: list[tuple[list[str], list[str]]], rng: random.Random, total: int
) -> str:
    classes, functions = exports[index]
    # Skewed imports: low-numbered modules play the part of widely used core modules.
    targets = {min(int(rng.paretovariate(1.2)) - 1, total - 1) for _ in range(rng.randint(2, 5))}
    targets.discard(index)
    lines = [f'"""{_module_name(index)}: {classes[0]} and its helpers."""', ""]
    lines += ["from __future__ import annotations", "", "import json", "import os", ""]
    used: list[str] = []
    used_classes: list[str] = []
    for target in sorted(targets):
        their_classes, their_functions = exports[target]
        names = [their_classes[0], *their_functions[:2]]
        used_classes.append(their_classes[0])
        used += their_functions[:2]
        lines.append(f"from {_module_name(target)} import {', '.join(names)}")
    lines += ["", f"DEFAULT_LIMIT_{index} = {rng.randint(10, 500)}", f'PREFIX = "m{index}"', ""]
    for name in classes:
        lines += _class(name, used, used_classes, rng)
    for name in functions:
        lines += _function(name, used, rng)
    return "\n".join(lines) + "\n"


def _class(name: str, used: list[str], used_classes: list[str], rng: random.Random) -> list[str]:
    other = rng.choice(used_classes) if used_classes else "object"
    lines = [
        "",
        f"class {name}:",
        f'    """A {name} keeps its items and hands them to {other}."""',
        "",
        "    def __init__(self, items: list[str] | None = None, limit: int = 10) -> None:",
        "        self.items = list(items or [])",
        "        self.limit = limit",
        f"        self.peer: {other} | None = None",
        "",
    ]
    for verb in rng.sample(_VERBS, rng.randint(2, 5)):
        call = rng.choice(used) if used else "len"
        lines += [
            f"    def {verb}(self, key: str, *, strict: bool = False) -> dict[str, object]:",
            f'        """{verb.title()} one item of this {name}."""',
            "        result: dict[str, object] = {}",
            "        for position, item in enumerate(self.items[: self.limit]):",
            "            if strict and not item.startswith(key):",
            "                continue",
            f"            result[f'{{key}}-{{position}}'] = {call}(item)",
            "        if not result:",
            '            raise KeyError(f"nothing for {key!r}")',
            "        return result",
            "",
        ]
    return lines


def _function(name: str, used: list[str], rng: random.Random) -> list[str]:
    call = rng.choice(used) if used else "str"
    return [
        "",
        f"def {name}(value: object, retries: int = {rng.randint(1, 5)}) -> str:",
        f'    """{name.replace("_", " ").capitalize()}, trying a few times."""',
        "    last = None",
        "    for attempt in range(retries):",
        "        try:",
        f"            return json.dumps({call}(value), sort_keys=True)",
        "        except (TypeError, ValueError) as exc:",
        "            last = exc",
        '            os.environ.get("DEBUG") and print(attempt, exc)',
        '    raise RuntimeError(f"gave up: {last}")',
    ]


def generate_tree(root: Path, files: int, seed: int = 4) -> None:
    """Write a Python tree of `files` modules under `root/app` (see the module docstring)."""
    rng = random.Random(seed)
    exports = [_exports(index, rng) for index in range(files)]
    for index in range(files):
        path = root / _module_path(index)
        if index % _PACKAGE_SIZE == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            (path.parent / "__init__.py").write_text("")
        path.write_text(_module(index, exports, rng, files))
    (root / "app" / "__init__.py").write_text("")
    (root / ".gitignore").write_text("build/\n*.pyc\n")


def _timed_map(root: Path, cache: Path) -> tuple[float, int]:
    started = time.perf_counter()
    result = build_repo_map(root, tokens=1024, cache_file=cache)
    return time.perf_counter() - started, len(result.parsed)


def run(*, quick: bool) -> list[Row]:
    """Build the map of a generated tree with an empty cache, then five times warm."""
    modules = 300 if quick else 2_000
    with tempfile.TemporaryDirectory(prefix="moot-bench-repomap-") as scratch:
        root, cache = Path(scratch, "tree"), Path(scratch, "cache.sqlite3")
        generate_tree(root, modules)
        cold, parsed = _timed_map(root, cache)
        warm_runs = [_timed_map(root, cache) for _ in range(5)]
    warm = median([seconds for seconds, _ in warm_runs])
    reparsed = max(count for _, count in warm_runs)
    return [
        Row(f"repo map cold, {parsed:,} Python files parsed", ms(cold), _COLD_TARGET),
        Row(f"repo map warm, same tree, p50 of 5 ({reparsed} parsed)", ms(warm), _WARM_TARGET),
    ]


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
