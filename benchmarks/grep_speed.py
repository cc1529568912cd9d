"""The `grep` tool against ripgrep run directly, on a large tree.

A temporary git work tree of 50,000 small files (5,000 with `--quick`): Python modules of ~25
lines in directories of 200, one in 500 of them holding a match; a `.gitignore` hides a tenth
of the files (a `build/` directory and `*.log` files, full of matches). Every search must read
the whole tree, since the matches stay well under the tool's output cap. Timed, warm (after
one untimed run each), with the median of several runs:

- `rg PATTERN` run directly in the tree, the way a person runs it (multi-threaded);
- the `grep` tool through `invoke`, with ripgrep (`--json`, sorted by path, which makes
  ripgrep search with one thread, so output is stable);
- the `grep` tool's pure-Python fallback (`use_ripgrep=False`).

All three must find the same files; the benchmark fails loudly if they do not.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from moot.tools.base import Tool, ToolContext
from moot.tools.grep import grep_tool
from moot.workspace import Workspace
from report import Row, ms, table
from timing import median

NAME = "grep"
TARGET_TOOL = "<= 1.5x rg"
TARGET_FALLBACK = "<= 10x rg"
TARGET = f"tool {TARGET_TOOL}; fallback {TARGET_FALLBACK}"
PATTERN = r"needle_\d+\("
_CTX = ToolContext("bench", "run", "call", "bench", "grep")
_PER_DIR = 200
_MATCH_EVERY = 500


def _module(index: int) -> str:
    lines = [f'"""Module {index}."""', "", "import os", ""]
    for n in range(5):
        lines += [f"def function_{index}_{n}(x):", f"    y = x * {n} + {index}", "    return y", ""]
    if index % _MATCH_EVERY == 0:
        lines += [f"def caller_{index}():", f"    return needle_{index}(1)"]
    return "\n".join(lines) + "\n"


def build_tree(root: Path, files: int) -> int:
    """Write `files` files under `root` (a tenth of them ignored); return how many match."""
    ignored = files // 10
    kept = files - ignored
    (root / ".gitignore").write_text("build/\n*.log\n")
    matching = 0
    for index in range(kept):
        directory = root / "src" / f"pkg{index // _PER_DIR:04d}"
        if index % _PER_DIR == 0:
            directory.mkdir(parents=True)
        (directory / f"mod{index % _PER_DIR:03d}.py").write_text(_module(index))
        matching += index % _MATCH_EVERY == 0
    build = root / "build"
    build.mkdir()
    for index in range(ignored):
        name = f"gen{index:05d}.py" if index % 2 else f"run{index:05d}.log"
        (build if index % 2 else root / "src" / "pkg0000").joinpath(name).write_text(
            f"needle_{index}(0)\n" * 3
        )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)  # rg honours .gitignore in repos
    return matching


def _interleaved(rounds: int, actions: dict[str, Callable[[], object]]) -> dict[str, float]:
    """The median time of each action; one untimed warm-up each, then rounds taking turns.

    Taking turns spreads the noise of a busy machine over all of them alike.
    """
    times: dict[str, list[float]] = {name: [] for name in actions}
    for action in actions.values():
        action()  # warm: the tree in the page cache, modules imported
    for _ in range(rounds):
        for name, action in actions.items():
            started = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - started)
    return {name: median(values) for name, values in times.items()}


def _rg(rg: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # An explicit "." and no stdin: ripgrep given no path searches its stdin when that is a pipe.
    return subprocess.run(
        [rg, "--no-config", *args, "--", PATTERN, "."],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )


def _tool_files(runner: asyncio.Runner, tool: Tool) -> set[str]:
    result = runner.run(tool.invoke({"pattern": PATTERN, "output": "files"}, _CTX))
    assert not result.is_error, result.content
    return set(result.content.splitlines())


def run(*, quick: bool) -> list[Row]:
    """Build the tree, check that all three find the same files, then time them."""
    rg = shutil.which("rg")
    if rg is None:
        return [Row("grep: rg is not on PATH", "skipped", TARGET)]
    files = 5_000 if quick else 50_000
    with (
        tempfile.TemporaryDirectory(prefix="moot-bench-grep-") as scratch,
        asyncio.Runner() as runner,  # one event loop for every call, as in the runtime
    ):
        root = Path(scratch)
        matching = build_tree(root, files)
        ws = Workspace(root)
        with_rg, fallback = grep_tool(ws), grep_tool(ws, use_ripgrep=False)
        found = _rg(rg, root, "--files-with-matches").stdout.splitlines()
        expected = {line.removeprefix("./") for line in found}
        assert len(expected) == matching, (len(expected), matching)
        for tool in (with_rg, fallback):
            assert _tool_files(runner, tool) == expected, "the grep tool and rg disagree"

        def through(tool: Tool) -> Callable[[], None]:
            def call() -> None:
                result = runner.run(tool.invoke({"pattern": PATTERN}, _CTX))
                assert not result.is_error, result.content

            return call

        medians = _interleaved(
            3 if quick else 5,
            {
                "rg": lambda: _rg(rg, root),
                "rg json": lambda: _rg(rg, root, "--json", "--sort=path", "--no-mmap", "--hidden"),
                "tool": through(with_rg),
                "fallback": through(fallback),
            },
        )
    base = medians["rg"]

    def versus(name: str) -> str:
        return f"{ms(medians[name])} = {medians[name] / base:.2f}x rg"

    size = f"{files:,} files, {matching} matching, {os.cpu_count()} CPUs"
    return [
        Row(f"grep: rg directly ({size})", ms(base)),
        Row(
            "grep: rg --json --sort=path (reference: sorting in rg is single-threaded)",
            versus("rg json"),
        ),
        Row("grep: tool with ripgrep (invoke)", versus("tool"), TARGET_TOOL),
        Row("grep: tool, Python fallback (invoke)", versus("fallback"), TARGET_FALLBACK),
    ]


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
