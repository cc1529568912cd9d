"""What bubblewrap adds to a shell command: `true` on the host vs in the sandbox.

Both run through `Sandbox.run` as the `bash` tool calls it: `bash -c true` in a fresh
workspace, output captured, environment scrubbed, the process group killed at the end. The
only difference is the `bwrap` wrapper (mounts, namespaces, the hidden paths) and the checks
that build its arguments. Medians of 50 runs each, taking turns, after a few warm-up runs.
The reference rows time the bare processes (`posix_spawn` and wait, no moot) for scale.

A third sandbox runs in a workspace of 2,000 files under deny rules (`Read(.env)`, which
matches at any depth and so walks the tree, `Read(./secrets/**)` and `Edit(./conf/app.toml)`):
what working out and binding the masks before each command costs. That workspace is a git
repository of 100 commits (the denied files ignored), so the masks also ask whether git's
index or history holds a hidden path (`moot.permissions.tracked`). A fourth does the same in
a workspace of 50,000 files, ten a directory as in `node_modules`. The session's mask source
keeps what each directory held while it is unchanged, so these rows are its steady state:
the trees are left still for `RACY_NS` first (a directory changed more recently is listed
again each time). The mask rows time the mask sources alone: the uncached walk
(`sandbox_masks`, what every command paid before the cache), a new source's first call, and
the median of its later calls.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from moot.permissions.masks import RACY_NS, mask_source, sandbox_masks
from moot.permissions.rules import RuleSet
from moot.sandbox.base import Sandbox, SandboxPolicy
from moot.sandbox.bubblewrap import BubblewrapSandbox
from moot.sandbox.bwrap_probe import bwrap_unavailable
from moot.sandbox.host import HostSandbox
from report import Row, ms, table
from timing import median, time_processes

NAME = "sandbox"
TARGET = "bubblewrap - host <= 10 ms"
_WARMUP = 5


_GIT_NOTE = " in a git repository"
_DENY = ("Read(.env)", "Read(./secrets/**)", "Edit(./conf/app.toml)")


def _populate(root: Path, files: int, *, per_directory: int | None = None) -> None:
    """`files` small files in nested directories (140 of them, or `per_directory` files in
    each, `node_modules` style), and the paths `_DENY` covers."""
    for index in range(files):
        if per_directory is None:
            path = root / f"pkg{index % 20}" / f"mod{index % 7}" / f"f{index}.py"
        else:
            leaf = index // per_directory
            path = root / "node_modules" / f"pkg{leaf // 10}" / f"lib{leaf % 10}" / f"f{index}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    for rel in (".env", "pkg3/.env", "secrets/key.pem", "conf/app.toml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("SECRET=1\n")


def _commit_all_but_denied(root: Path) -> None:
    """Make `root` a git repository with 100 commits of all it holds but what `_DENY` hides
    (ignored), so that the masks also ask whether git's history holds a hidden path."""
    (root / ".gitignore").write_text(".env\nsecrets/\n")
    (root / "conf" / "app.toml").write_text("app = 1\n")  # not the hidden files' content
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for index in range(100):
        (root / "log.txt").write_text(f"{index}\n")
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", *identity, "commit", "-q", "-m", str(index)], cwd=root, check=True)


def _time_masks(root: Path, runs: int) -> tuple[float, float, float]:
    """Seconds for the masks of `root`: the uncached walk (median of 3), a new source's first
    call, and the median of its next `runs` calls."""
    rules = RuleSet(deny=list(_DENY))
    uncached = []
    for _ in range(3):
        start = time.perf_counter()
        sandbox_masks(rules, root)
        uncached.append(time.perf_counter() - start)
    source = mask_source(rules, root)
    assert source is not None
    start = time.perf_counter()
    source()
    first = time.perf_counter() - start
    later = []
    for _ in range(runs):
        start = time.perf_counter()
        source()
        later.append(time.perf_counter() - start)
    return median(uncached), first, median(later)


async def _time_runs(
    sandboxes: dict[str, tuple[Sandbox, Path]], runs: int
) -> dict[str, list[float]]:
    walls: dict[str, list[float]] = {label: [] for label in sandboxes}
    for round_number in range(_WARMUP + runs):
        for label, (sandbox, workspace) in sandboxes.items():
            result = await sandbox.run(
                "true", cwd=workspace, env={"PATH": "/usr/bin:/bin"}, timeout=30
            )
            assert result.exit_code == 0, result.stderr
            if round_number >= _WARMUP:
                walls[label].append(result.duration_ms / 1000)
    for sandbox, _ in sandboxes.values():
        await sandbox.close()
    return walls


def _without_descriptors(argv: list[str]) -> list[str]:
    """`argv` without what bwrap reads from a descriptor (`--seccomp FD`, the git config's
    `[--perms MODE] --file FD DEST`): each is the launching sandbox's, read once by the bwrap
    it started, and no timed process inherits it."""
    kept: list[str] = []
    at = 0
    while at < len(argv):
        if argv[at] == "--seccomp":
            at += 2
        elif argv[at] == "--perms" and argv[at + 2] == "--file":
            at += 5
        elif argv[at] == "--file":
            at += 3
        else:
            kept.append(argv[at])
            at += 1
    return kept


def run(*, quick: bool) -> list[Row]:
    """Time `true` through the host and the bubblewrap backends."""
    runs = 20 if quick else 50
    big = 5_000 if quick else 50_000
    why_not = bwrap_unavailable()
    with tempfile.TemporaryDirectory(prefix="moot-bench-sandbox-") as scratch:
        workspace = Path(scratch).resolve() / "empty"
        workspace.mkdir()
        policy = SandboxPolicy(workspace)
        sandboxes: dict[str, tuple[Sandbox, Path]] = {"host": (HostSandbox(policy), workspace)}
        denied = {2_000: Path(scratch).resolve() / "denied", big: Path(scratch).resolve() / "big"}
        _populate(denied[2_000], 2_000)
        _commit_all_but_denied(denied[2_000])
        _populate(denied[big], big, per_directory=10)
        time.sleep(RACY_NS / 1e9)  # until the new directories' listings may be kept
        if why_not is None:
            bwrap = BubblewrapSandbox(policy)
            sandboxes["bubblewrap"] = (bwrap, workspace)
            for files, root in denied.items():
                masks = mask_source(RuleSet(deny=list(_DENY)), root)
                masked = BubblewrapSandbox(SandboxPolicy(root, masks=masks))
                sandboxes[f"bubblewrap, deny rules, {files:,} files"] = (masked, root)
            launched = asyncio.run(bwrap.launch("true", workspace))
            launched.close()
            wrapped = _without_descriptors(launched.argv[:-3])
            bare = {
                "host": ["/bin/true"],
                "bubblewrap": [*wrapped, "/bin/true"],
                "bare bubblewrap": [bwrap.bwrap, "--ro-bind", "/", "/", "/bin/true"],
            }
        else:
            bare = {"host": ["/bin/true"]}
        masks_timed = {files: _time_masks(root, runs) for files, root in denied.items()}
        processes = time_processes(bare, runs=runs)  # before the sandboxes close: bwrap's /tmp
        walls = asyncio.run(_time_runs(sandboxes, runs))
    mask_rows = [
        Row(
            f"masks over {files:,} files: uncached walk / cached, first call / later calls",
            " / ".join(ms(seconds) for seconds in timed),
        )
        for files, timed in masks_timed.items()
    ]
    rows = [Row(f"`true` via Sandbox.run, host (median of {runs})", ms(median(walls["host"])))]
    if why_not is not None:
        rows.append(Row("`true` via Sandbox.run, bubblewrap", f"not measured: {why_not}", TARGET))
        return rows + mask_rows
    host, sandboxed = median(walls["host"]), median(walls["bubblewrap"])
    rows += [
        Row(f"`true` via Sandbox.run, bubblewrap (median of {runs})", ms(sandboxed)),
        Row("bubblewrap overhead per command (difference)", ms(sandboxed - host), TARGET),
        *(
            Row(
                f"  with deny rules over {files:,} files{_GIT_NOTE if files == 2_000 else ''}"
                " (masks worked out and bound per command)",
                ms(median(walls[f"bubblewrap, deny rules, {files:,} files"]) - host),
            )
            for files in denied
        ),
        Row("bare `/bin/true`, spawn to exit (reference)", ms(median(processes["host"].walls))),
        Row(
            "bare `bwrap ... /bin/true` (moot's mounts; no seccomp filter, no git config),"
            " spawn to exit (reference)",
            ms(median(processes["bubblewrap"].walls)),
        ),
        Row(
            "bare `bwrap --ro-bind / / /bin/true`, spawn to exit (reference)",
            ms(median(processes["bare bubblewrap"].walls)),
        ),
    ]
    return rows + mask_rows


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
