"""File work in a big repository (issue 31): the generated 100,000-file monorepo of
`big_repo` (`--quick`: 5,000 files), read only.

- **file index**: the workspace's one listing, built by `rg --files` (and, for reference, by
  the walk used without ripgrep), then a look that finds nothing changed;
- **glob** `**/*.py` through the tool (index warm: a session's second glob) against
  `rg --files -g '*.py'` run directly, medians of interleaved rounds; both must list the same
  files;
- **`@` completion**: every file reachable (five files picked across the tree, the
  deepest included, each found by typing its directory and name), and the time from a key to
  its suggestions with a warm index (each prefix of a typed path, p50 and max), plus the
  listing again as a new `@` word does;
- **repo map**: cold (an empty cache; a session's index, whose first look parses for a
  bounded time and says what it left), everything parsed, warm in the same session (nothing
  changed), warm with a new focus, and a new session over the warm cache: its first map
  (answered from the look and the map the last session saved, reading no row of the cache)
  and its first map with a focus (every
  cached file's facts decoded, then ranked);
- **cold grep**: the `grep` tool's first search in a new workspace (the page cache as the
  machine left it) against `rg` run directly after it, and as the tool runs it.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import big_repo
from moot.frontend.fuzzy import PathIndex
from moot.repomap import RepoIndex, map_repository
from moot.tools.base import ToolContext
from moot.tools.glob import find_files
from moot.tools.grep import grep_tool
from moot.workspace import Workspace
from moot.workspace.file_index import FileIndex
from moot.workspace.ripgrep import WALK_ARGS
from report import Row, ms, table
from timing import median

NAME = "bigrepo"
TARGET = (
    "glob <= 1.5x rg --files; @ key <= 50 ms; repo map cold <= 4 s, warm <= 0.3 s,"
    " a new session's first <= 0.3 s"
)
_PATTERN = "**/*.py"
_GREP = r"def helper_0001\d\("


def _interleaved(rounds: int, actions: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The median time of each action: one untimed run each, then rounds taking turns."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    for action in actions.values():
        action()
    for _ in range(rounds):
        for name, action in actions.items():
            started = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - started)
    return {name: median(values) for name, values in times.items()}


def _timed(action: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def _index_rows(root: Path, rg: str) -> list[Row]:
    built, listing = _timed(lambda: FileIndex(root, rg).listing())
    walked, _ = _timed(lambda: FileIndex(root, None).listing())
    index = FileIndex(root, rg)
    index.listing()
    fresh = median([_timed(index.listing)[0] for _ in range(5)])
    count = len(listing.files)  # type: ignore[attr-defined]
    return [
        Row(f"file index built by rg --files, {count:,} files", ms(built)),
        Row("file index built by the walk (no ripgrep)", ms(walked)),
        Row("file index look, nothing changed (dir mtimes), p50 of 5", ms(fresh)),
    ]


def _glob_rows(root: Path, rg: str, rounds: int) -> list[Row]:
    ws = Workspace(root)
    # `-g` overrides ignore files (a `*.py` a nested .gitignore names is listed): the check
    # lists as the tools do (`WALK_ARGS`: hidden files too, only .gitignore files).
    listed = subprocess.run(
        [rg, "--files", *WALK_ARGS], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    ours = [rel for rel in ws.file_listing().files if rel.endswith(".py")]
    assert sorted(rel for rel in listed if rel.endswith(".py")) == ours, "index and rg disagree"
    medians = _interleaved(
        rounds,
        {
            "tool": lambda: find_files(ws, _PATTERN),
            "rg": lambda: subprocess.run(
                [rg, "--files", "-g", "*.py"], cwd=root, stdout=subprocess.DEVNULL, check=True
            ),
        },
    )
    ratio = medians["tool"] / medians["rg"]
    return [
        Row(f"rg --files -g '*.py' ({len(ours):,} files listed by glob), p50", ms(medians["rg"])),
        Row(f"glob {_PATTERN!r} through the tool, warm index, p50", ms(medians["tool"])),
        Row("glob / rg --files", f"{ratio:.2f}x", "<= 1.5x"),
    ]


def _completion_rows(root: Path) -> list[Row]:
    ws = Workspace(root)
    listing = ws.file_listing()
    paths = PathIndex(listing.files, listing.notes)
    rng = random.Random(31)
    picked = [*rng.sample(listing.files, 4), max(listing.files, key=lambda p: p.count("/"))]
    found = 0
    timings: list[float] = []
    for target in picked:
        directory, _, name = target.rpartition("/")
        typed = f"{directory.rpartition('/')[2]}{name}"
        for end in range(1, len(typed) + 1):
            started = time.perf_counter()
            shown = paths.rank(typed[:end], 30)
            timings.append(time.perf_counter() - started)
        found += target in shown
    relisted, _ = _timed(lambda: PathIndex(ws.file_listing().files))
    look, _ = _timed(ws.file_listing)
    return [
        Row("@ completion: files reachable (5 picked, the deepest included)", f"{found} of 5"),
        Row("@ completion: suggestions after a key, warm, p50", ms(median(timings))),
        Row("@ completion: suggestions after a key, warm, max", ms(max(timings)), "<= 50 ms"),
        Row("@ completion: a new @ word lists again (index look)", ms(look)),
        Row("@ completion: files listed and sorted for ranking again", ms(relisted)),
    ]


def _map_rows(root: Path) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="moot-bench-bigmap-") as scratch:
        cache = Path(scratch, "cache.sqlite3")
        files = Workspace(root).file_index()
        files.listing()  # a session's index is built before its first map
        index = RepoIndex(root, cache_file=cache, files=files)
        cold, first = _timed(lambda: map_repository(index))
        notes: tuple[str, ...] = first.notes  # type: ignore[attr-defined]
        left = next((n.split(" source")[0] for n in notes if "not parsed yet" in n), "none")
        rows.append(Row(f"repo map cold, first look (not parsed yet: {left})", ms(cold), "<= 4 s"))
        rest, _ = _timed(lambda: index.index(seconds=3600))
        rows.append(Row("repo map: the rest parsed (after the first look)", ms(rest)))
        map_repository(index)
        warm = median([_timed(lambda: map_repository(index))[0] for _ in range(5)])
        rows.append(
            Row("repo map warm, same session, nothing changed, p50 of 5", ms(warm), "<= 0.3 s")
        )
        focus, _ = _timed(lambda: map_repository(index, focus=["pkg99"]))
        rows.append(Row("repo map warm, same session, a new focus", ms(focus)))
        last = map_repository(index)
        index.close()
        for note in last.notes:
            rows.append(Row(f"repo map says: {note[:90]}", "-"))
        renewed = median([_new_session(root, cache, files) for _ in range(5)])
        rows.append(
            Row(
                "repo map, a new session over the warm cache (its saved map), p50 of 5",
                ms(renewed),
                "<= 0.3 s",
            )
        )
        with RepoIndex(root, cache_file=cache, files=files) as again:
            focused, _ = _timed(lambda: map_repository(again, focus=["pkg99"]))
        rows.append(
            Row("repo map, a new session's first map with a focus (decoded, ranked)", ms(focused))
        )
    return rows


def _new_session(root: Path, cache: Path, files: FileIndex) -> float:
    """A new session's first map over the warm cache; it reads no row of the cache."""
    with RepoIndex(root, cache_file=cache, files=files) as index:
        took, _ = _timed(lambda: map_repository(index))
        assert index.rows_read == 0, "the saved look was not used"
    return took


def _grep_rows(root: Path, rg: str) -> list[Row]:
    context = ToolContext("bench", "run", "call", "bench", "grep")
    with asyncio.Runner() as runner:
        tool = grep_tool(Workspace(root))
        cold, result = _timed(lambda: runner.run(tool.invoke({"pattern": _GREP}, context)))
        assert not result.is_error, result.content  # type: ignore[attr-defined]
    direct, _ = _timed(
        lambda: subprocess.run(
            [rg, "--no-config", "--", _GREP, "."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            check=False,
        )
    )
    sorted_rg, _ = _timed(
        lambda: subprocess.run(
            [rg, "--no-config", "--json", "--sort", "path", "--", _GREP, "."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            check=False,
        )
    )
    return [
        Row("grep tool, first search in a new workspace (page cache as found)", ms(cold)),
        Row("rg run directly after it, same pattern", ms(direct)),
        Row("rg --json --sort path (as the tool runs it: one thread)", ms(sorted_rg)),
    ]


def run(*, quick: bool) -> list[Row]:
    """Measure the generated tree (made once and cached; see `big_repo`)."""
    rg = shutil.which("rg")
    if rg is None:
        return [Row("big repository: rg is not on PATH", "skipped", TARGET)]
    root = big_repo.repository(5_000 if quick else 100_000)
    rows = _index_rows(root, rg)
    rows += _glob_rows(root, rg, 3 if quick else 7)
    rows += _completion_rows(root)
    rows += _grep_rows(root, rg)
    rows += _map_rows(root)
    return rows


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
