"""What reading a session's files costs before its first model request, and what they add to it.

`moot -p` reads the shipped skills and agents, and the project's and user's skills, commands,
agents and memory, on every start, and asks git for a short status in a thread while the rest
of the session is set up. Measured in process (median of many runs, files in the OS cache):
- `load_guidance` with nothing but what moot ships (a bare directory);
- the same in a busy project: 50 skills, 20 commands, 5 agent definitions, an AGENTS.md in each
  of 6 directories from the repository's top down, with imports;
- the short git status (`git_summary`: one `git config` and one `git status` process);
- the import of the modules that do it (`-X importtime`, self times summed).
And the sizes the files add to every request: the system prompt's parts (`SessionStatus.context`).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from report import Row, ms, table
from timing import VENV_BIN, median

NAME = "skills"
TARGET = "(start-up: a few ms)"
_OURS = re.compile(r"moot\.(skills|prompts|client\.(facts|prompt|briefing|commands))\b")


def _timed(work: Callable[[], object], runs: int) -> float:
    work()  # warm: the modules are imported and the files cached, as on a second start
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return median(times)


def _busy_project(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for n in range(50):
        folder = root / ".agents/skills" / f"skill-{n:02}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{n:02}\ndescription: Does task {n}. Use when asked for {n}.\n"
            "argument-hint: <path>\n---\n" + "Step.\n" * 40
        )
    (root / ".moot/commands").mkdir(parents=True)
    for n in range(20):
        (root / f".moot/commands/cmd-{n:02}.md").write_text(
            f"---\ndescription: Command {n}\n---\nDo $ARGUMENTS.\n"
        )
    (root / ".moot/agents").mkdir(parents=True)
    for n in range(5):
        (root / f".moot/agents/peer-{n}.md").write_text(
            f"---\nname: peer-{n}\ndescription: Peer {n}.\ntools: Read, git_diff\n---\nHelp.\n"
        )
    cwd = root
    for depth in range(6):
        (cwd / "AGENTS.md").write_text(f"Level {depth}: conventions.\n" * 20 + "See @notes.md\n")
        (cwd / "notes.md").write_text("More notes.\n" * 10)
        cwd = cwd / f"d{depth}"
        cwd.mkdir()
    return cwd.parent


def _import_ms() -> float:
    code = (
        "import moot.client.local, moot.client.briefing, moot.client.commands, moot.skills.guidance"
    )
    done = subprocess.run(
        [str(VENV_BIN / "python"), "-X", "importtime", "-c", code],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    total = 0
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and _OURS.search(parts[2]):
            total += int(parts[0].split(":")[1])
    return total / 1e6


def _context(cwd: Path) -> list[Row]:
    from moot.client.local import SessionOptions, open_client

    script = cwd.parent / "script.yaml"
    script.write_text("- text: hi\n")
    client = open_client(SessionOptions(cwd=cwd, model=f"scripted:{script}"))
    parts = client.status().prompt_parts
    asyncio.run(client.close())
    return [Row(f"  request part: {p.name}", f"{p.bytes:,} B", p.detail) for p in parts]


def run(*, quick: bool) -> list[Row]:
    from moot.client.facts import git_summary
    from moot.skills.guidance import load_guidance

    runs = 10 if quick else 50
    with tempfile.TemporaryDirectory(prefix="moot-bench-skills-") as tmp:
        bare = Path(tmp) / "bare"
        bare.mkdir()
        busy = _busy_project(Path(tmp) / "busy")
        config = Path(tmp) / "config"
        config.mkdir()
        shipped = _timed(lambda: load_guidance(bare, config), runs)
        loaded = load_guidance(busy, config)
        busy_time = _timed(lambda: load_guidance(busy, config), runs)
        git = _timed(lambda: git_summary(busy), max(5, runs // 5))
        rows = [
            Row("load_guidance: shipped skills and agents only, median", ms(shipped), TARGET),
            Row(
                f"load_guidance: {len(loaded.skills.skills)} skills, {len(loaded.commands)} "
                f"commands, {len(loaded.agents)} agents, {len(loaded.memory.files)} memory files",
                ms(busy_time),
                "(reference)",
            ),
            Row(
                "short git status for the prompt (in a thread, overlapping set-up)",
                ms(git),
                "(overlapped)",
            ),
            Row(
                "imports of moot.skills, moot.prompts and the client's prompt modules",
                ms(_import_ms()),
                "(self time)",
            ),
            Row("first request's parts, a bare directory:", ""),
            *_context(bare),
        ]
    return rows


def main() -> int:
    print(table(run(quick="--quick" in sys.argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
