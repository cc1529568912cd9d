"""What bubblewrap adds to a shell command: `true` on the host vs in the sandbox.

Both run through `Sandbox.run` as the `bash` tool calls it: `bash -c true` in a fresh
workspace, output captured, environment scrubbed, the process group killed at the end. The
only difference is the `bwrap` wrapper (mounts, namespaces, the hidden paths) and the checks
that build its arguments. Medians of 50 runs each, taking turns, after a few warm-up runs.
The reference rows time the bare processes (`posix_spawn` and wait, no moot) for scale.

A third sandbox runs in a workspace of 2,000 files under deny rules (`Read(.env)`, which
matches at any depth and so walks the tree, `Read(./secrets/**)` and `Edit(./conf/app.toml)`):
what working out and binding the masks before each command costs.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from moot.permissions.masks import mask_source
from moot.permissions.rules import RuleSet
from moot.sandbox.base import Sandbox, SandboxPolicy
from moot.sandbox.bubblewrap import BubblewrapSandbox, bwrap_unavailable
from moot.sandbox.host import HostSandbox
from report import Row, ms, table
from timing import median, time_processes

NAME = "sandbox"
TARGET = "bubblewrap - host <= 10 ms"
_WARMUP = 5


_DENY = ("Read(.env)", "Read(./secrets/**)", "Edit(./conf/app.toml)")


def _populate(root: Path, files: int) -> None:
    """`files` small files in nested directories, and the paths `_DENY` covers."""
    for index in range(files):
        path = root / f"pkg{index % 20}" / f"mod{index % 7}" / f"f{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    for rel in (".env", "pkg3/.env", "secrets/key.pem", "conf/app.toml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("SECRET=1\n")


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


def run(*, quick: bool) -> list[Row]:
    """Time `true` through the host and the bubblewrap backends."""
    runs = 20 if quick else 50
    why_not = bwrap_unavailable()
    with tempfile.TemporaryDirectory(prefix="moot-bench-sandbox-") as scratch:
        workspace = Path(scratch).resolve() / "empty"
        workspace.mkdir()
        policy = SandboxPolicy(workspace)
        sandboxes: dict[str, tuple[Sandbox, Path]] = {"host": (HostSandbox(policy), workspace)}
        if why_not is None:
            bwrap = BubblewrapSandbox(policy)
            sandboxes["bubblewrap"] = (bwrap, workspace)
            denied = Path(scratch).resolve() / "denied"
            _populate(denied, 2_000)
            masks = mask_source(RuleSet(deny=list(_DENY)), denied)
            masked = BubblewrapSandbox(SandboxPolicy(denied, masks=masks))
            sandboxes["bubblewrap, deny rules"] = (masked, denied)
            wrapped = asyncio.run(bwrap.launch("true", workspace)).argv[:-3]
            bare = {"host": ["/bin/true"], "bubblewrap": [*wrapped, "/bin/true"]}
        else:
            bare = {"host": ["/bin/true"]}
        processes = time_processes(bare, runs=runs)  # before the sandboxes close: bwrap's /tmp
        walls = asyncio.run(_time_runs(sandboxes, runs))
    rows = [Row(f"`true` via Sandbox.run, host (median of {runs})", ms(median(walls["host"])))]
    if why_not is not None:
        rows.append(Row("`true` via Sandbox.run, bubblewrap", f"not measured: {why_not}", TARGET))
        return rows
    host, sandboxed = median(walls["host"]), median(walls["bubblewrap"])
    rows += [
        Row(f"`true` via Sandbox.run, bubblewrap (median of {runs})", ms(sandboxed)),
        Row("bubblewrap overhead per command (difference)", ms(sandboxed - host), TARGET),
        Row(
            "  with deny rules over 2,000 files (masks worked out and bound per command)",
            ms(median(walls["bubblewrap, deny rules"]) - host),
        ),
        Row("bare `/bin/true`, spawn to exit (reference)", ms(median(processes["host"].walls))),
        Row(
            "bare `bwrap ... /bin/true`, spawn to exit (reference)",
            ms(median(processes["bubblewrap"].walls)),
        ),
    ]
    return rows


def main() -> int:
    """Print the table for this benchmark alone."""
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
