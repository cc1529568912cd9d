"""`moot -p` on a three-turn coding task against a bare httpx agent doing the same task.

Both are whole processes against the same local server (tests/model_server.py), which plays
the same three Anthropic turns to each: read notes.txt, edit its typo, answer. The bare agent
(benchmarks/bare_agent.py) streams, runs `read` and `edit` in-process and keeps nothing: no
event log, no sandbox, no settings. moot runs the way a person runs it, `moot -p TASK --model
... --permission-mode acceptEdits` (the edit needs no question) with its default sandbox and its
event log; `read` and `edit` are file tools, so no sandbox starts. The rounds alternate the
order so drift in the machine hits all alike; the ratio of the medians is what moot's
guarantees cost on a short task. On a shared machine the wall times move with the load, so the
CPU time (user + system) of each process is given too. httpx's default client loads the
CA bundle even for http://, which moot skips; a third row times the bare agent skipping it too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

from report import Row, ms
from timing import VENV_BIN, child_env, median, percentile

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from model_server import ModelServer, Reply  # noqa: E402
from wire_builders import anthropic  # noqa: E402

NAME = "agent"
TARGET = "moot -p / bare agent <= 1.2x"
TASK = "fix the typo in notes.txt"
BARE = Path(__file__).with_name("bare_agent.py")


def replies() -> list[Reply]:
    """The three turns the server plays: read, edit, answer."""
    edit = {"path": "notes.txt", "old": "wrold", "new": "world"}
    return [
        Reply(body=anthropic(call=("read", {"path": "notes.txt"}), n=1)),
        Reply(body=anthropic(call=("edit", edit), n=2)),
        Reply(body=anthropic("Fixed the typo.", n=3)),
    ]


def commands() -> dict[str, list[str]]:
    """Label to argv of the two agents."""
    python = str(VENV_BIN / "python")
    return {
        "moot": [
            str(VENV_BIN / "moot"),
            "-p",
            TASK,
            "--model",
            "anthropic/claude-haiku-4-5",
            "--permission-mode",
            "acceptEdits",
        ],
        "bare": [python, str(BARE), TASK],
        "bare, no TLS for http": [python, str(BARE), "--no-tls-for-http", TASK],
    }


def env(server: ModelServer, home: Path) -> dict[str, str]:
    keep = {k: v for k, v in child_env().items() if not k.startswith(("ANTHROPIC_", "MOOT_"))}
    return keep | {
        "ANTHROPIC_API_KEY": "sk-bench",
        "ANTHROPIC_BASE_URL": server.url,
        "MOOT_HOME": str(home),
    }


Times = tuple[float, float, tuple[float, ...]]
"""Wall and CPU seconds of one run, and its phases: start to the first request, each request
to the next, the last request to the exit."""


def one_task(server: ModelServer, work: Path, argv: list[str], home: Path) -> Times:
    """The times of one run of `argv` on a fresh typo; checks the file was fixed.

    Raises:
        RuntimeError: The agent failed or left the typo.
    """
    (work / "notes.txt").write_text("hello wrold\n")
    server.reply(*replies())
    seen = len(server.requests)
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=work, env=env(server, home), stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        said = errors.read()[-800:]
    if proc.returncode != 0 or (work / "notes.txt").read_text() != "hello world\n":
        raise RuntimeError(f"{argv[0]} failed the task: {said!r}")
    marks = [started, *(r.at for r in server.requests[seen:]), started + wall]
    phases = tuple(later - sooner for sooner, later in pairwise(marks))
    return wall, usage.ru_utime + usage.ru_stime, phases


def rounds(runs: int, warmup: int = 2) -> dict[str, list[Times]]:
    """The times of each agent, `runs` alternating rounds after `warmup` discarded ones."""
    timed: dict[str, list[Times]] = {label: [] for label in commands()}
    with tempfile.TemporaryDirectory(prefix="moot-bench-agent-") as tmp, ModelServer() as server:
        work, home = Path(tmp) / "work", Path(tmp) / "home"
        work.mkdir()
        # moot's start-up reads git state: give it the repository a person would have, with
        # moot's data directory outside it, where a person's is.
        subprocess.run(["git", "init", "-q", str(work)], check=True)
        for number in range(warmup + runs):
            order = list(commands().items())
            if number % 2:  # no command always runs just after another
                order.reverse()
            for label, argv in order:
                times = one_task(server, work, argv, home)
                if number >= warmup:
                    timed[label].append(times)
    return timed


def run(quick: bool = False) -> list[Row]:
    runs = 5 if quick else 20
    load = os.getloadavg()[0]
    timed = rounds(runs)
    after = os.getloadavg()[0]
    wall = {label: [t[0] for t in times] for label, times in timed.items()}
    cpu = {label: median([t[1] for t in times]) for label, times in timed.items()}
    phases = {
        label: " / ".join(
            f"{median(p) * 1000:.0f}" for p in zip(*(t[2] for t in times), strict=False)
        )
        for label, times in timed.items()
    }
    moot, bare = median(wall["moot"]), median(wall["bare"])
    strict = median(wall["bare, no TLS for http"])
    return [
        Row(
            f"moot -p, 3-turn task (read, edit, answer): wall p50 / p90 ({runs} rounds)",
            f"{ms(moot)} / {ms(percentile(wall['moot'], 90))}",
            "",
        ),
        Row(
            "  bare httpx agent, same task and server (benchmarks/bare_agent.py): p50 / p90",
            f"{ms(bare)} / {ms(percentile(wall['bare'], 90))}",
            "(reference)",
        ),
        Row(
            f"  moot -p / bare agent, wall medians (1-min load {load:.2f}, then {after:.2f})",
            f"{moot / bare:.2f}x",
            "<= 1.2x",
        ),
        Row(
            "  same, CPU time (user + system) medians: moot -p / bare agent",
            f"{ms(cpu['moot'])} / {ms(cpu['bare'])} = {cpu['moot'] / cpu['bare']:.2f}x",
            "(reference)",
        ),
        Row(
            "  where: start>request 1 / 1>2 / 2>3 / 3>exit, ms p50: moot -p; bare agent",
            f"{phases['moot']}; {phases['bare']}",
            "(reference)",
        ),
        Row(
            "  bare agent skipping the CA bundle for http:// as moot does: wall p50; moot -p / it",
            f"{ms(strict)}; {moot / strict:.2f}x",
            "(reference)",
        ),
    ]


def main() -> None:
    from report import table

    print(table(run(quick="--quick" in sys.argv)))


if __name__ == "__main__":
    main()
