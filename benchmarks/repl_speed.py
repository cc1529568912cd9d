"""The plain REPL in a pseudo-terminal: process start to a ready prompt, and how soon a typed key
echoes while an answer streams at 1,000 tokens a second.

The REPL runs as a person runs it: `moot --plain` with the scripted provider, in a git
repository, on a pty whose other end this benchmark reads. It plays the terminal's part: it
answers prompt_toolkit's cursor-position requests, as a real terminal does at once.

- Ready: from spawning the process to the prompt's mark drawn after the banner (keys typed
  from then on echo; the session opens meanwhile, and a message sent before it is open waits).
- Open: to the line naming the session, printed once it is open; each round beside a bare
  prompt_toolkit prompt (`BARE_PROMPT`) started the same way, and the ratio of the two. The
  CPU time each process had used by then (`timing.cpu_seconds`) is given too: on a shared
  machine the wall times move with the load, the CPU time much less. The same start through
  the resident moot (`MOOT_RESIDENT=1`, `resident_moot.py`) takes part in each round too (the
  three in turn, first to last), beside the in-process one (`MOOT_RESIDENT=0`); its cold
  start, which finds no resident process and starts one, is given on its own.
- Echo: with the answer streaming (`rate: 1000` tokens/s, 4 characters a delta, so 1,000
  deltas a second, each stored and published by the in-process session), a capital letter is
  typed every 50-150 ms; the time to its echo is from the write to the letter appearing in what
  the terminal receives (escape sequences removed; the answer holds no capital letters).
"""

from __future__ import annotations

import json
import os
import pty
import random
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, ms
from resident_moot import ResidentMoot, cold_row
from start_speed import ratio_row
from timing import VENV_BIN, child_env, cpu_seconds, median, percentile

NAME = "repl"
TARGET_READY = "<= 250 ms"
TARGET_ECHO = "<= 30 ms"
READY_MARK = "ctrl+d quits"
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[=>78]")
CPR_REQUEST = b"\x1b[6n"
LETTERS = "QWXZVYUGFNMIOT"
"""Typed one after another in a run (each appears only once typed)."""


class Terminal:
    """A process on a pty, and what it has written."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        self.received = b""

    def read(self, timeout: float) -> bytes:
        """What arrives within `timeout` (at least one read's worth when any does)."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, OSError):
            return b""
        if CPR_REQUEST in data:
            os.write(self.master, b"\x1b[1;1R" * data.count(CPR_REQUEST))
        self.received += data
        return data

    def wait_for(self, text: str, since: int = 0, timeout: float = 30) -> float:
        """Read until `text` shows (escapes removed) in what arrived after byte `since`;
        returns the time it did."""
        end = time.perf_counter() + timeout
        while True:
            shown = ESCAPES.sub("", self.received[since:].decode("utf-8", "replace"))
            if text in shown:
                return time.perf_counter()
            if time.perf_counter() > end:
                raise TimeoutError(f"{text!r} never showed; got {shown[-500:]!r}")
            if self.process.poll() is not None and not self.read(0):
                raise RuntimeError(f"moot exited with {self.process.returncode}: {shown[-500:]!r}")
            self.read(0.05)

    def cpu_seconds(self) -> float:
        """The CPU time the process has used so far (`timing.cpu_seconds`)."""
        return cpu_seconds(self.process.pid)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        os.close(self.master)


def _workspace(root: Path, answer_tokens: int) -> tuple[Path, Path, dict[str, str]]:
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("a repository\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    words = ["alpha", "beta", "gamma", "delta", "tokens", "stream", "quickly", "here"]
    rng = random.Random(7)
    lines, size = ["streaming starts"], 0
    while size < answer_tokens * 4:
        line = " ".join(rng.choice(words) for _ in range(10))
        lines.append(line)
        size += len(line) + 1
    script = root / "stream.json"
    turn = {"text": "\n".join(lines), "rate": 1000, "chunk_size": 4}
    script.write_text(json.dumps({"turns": [turn]}))
    env = child_env()
    env.update(
        {
            "MOOT_HOME": str(root / "home"),
            "TERM": "xterm-256color",
            "COLUMNS": "120",
            "LINES": "40",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
    )
    env.pop("NO_COLOR", None)
    return repo, script, env


def _ready_once(
    repo: Path, script: Path, env: dict[str, str], resident: ResidentMoot | None = None
) -> tuple[float, float, float]:
    """(to the ready prompt, to the session open, the CPU time used by then) in seconds;
    through `resident`, the CPU time is its fork's and the client's."""
    moot = str(VENV_BIN / "moot")
    terminal = Terminal([moot, "--plain", "--model", f"scripted:{script}"], repo, env)
    try:
        terminal.wait_for(READY_MARK)
        mark = terminal.received.rfind(READY_MARK.encode())
        ready = terminal.wait_for(">", since=mark) - terminal.started
        opened = terminal.wait_for("session ses_") - terminal.started
        cpu = terminal.cpu_seconds() + (resident.fork_cpu() if resident else 0.0)
        return ready, opened, cpu
    finally:
        terminal.type("\x04")
        terminal.close()


BARE_PROMPT = """\
from prompt_toolkit import PromptSession

PromptSession().prompt("bare> ")
"""
"""The reference: a bare prompt_toolkit prompt, nothing else, started in the same rounds."""


def _bare_once(repo: Path, bare: Path, env: dict[str, str]) -> tuple[float, float]:
    """(to the bare prompt drawn, the CPU time used by then) in seconds."""
    terminal = Terminal([sys.executable, str(bare)], repo, env)
    try:
        return terminal.wait_for("bare>") - terminal.started, terminal.cpu_seconds()
    finally:
        terminal.type("\x04")
        terminal.close()


def _echo_run(repo: Path, script: Path, env: dict[str, str], rng: random.Random) -> list[float]:
    moot = str(VENV_BIN / "moot")
    terminal = Terminal([moot, "--plain", "--model", f"scripted:{script}"], repo, env)
    latencies = []
    try:
        terminal.wait_for(READY_MARK)
        terminal.wait_for(">", since=terminal.received.rfind(READY_MARK.encode()))
        terminal.type("go\r")
        terminal.wait_for("streaming starts", since=len(terminal.received))
        # Streaming: wait for a second of it, so the measure is of a steady stream.
        end = time.perf_counter() + 1.0
        while time.perf_counter() < end:
            terminal.read(0.05)
        for letter in LETTERS:
            since = len(terminal.received)
            terminal.type(letter)
            sent = time.perf_counter()
            latencies.append(terminal.wait_for(letter, since=since, timeout=10) - sent)
            pause = time.perf_counter() + rng.uniform(0.05, 0.15)
            while time.perf_counter() < pause:
                terminal.read(0.01)
        terminal.type("\x03")  # stop the turn
    finally:
        terminal.close()
    return latencies


def run(*, quick: bool) -> list[Row]:
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory(prefix="moot-bench-repl-") as tmp,
        ResidentMoot() as resident,
    ):
        repo, script, env = _workspace(Path(tmp), answer_tokens=20_000)
        through = resident.env(env, resident=True)
        env = resident.env(env, resident=False)
        runs = 3 if quick else 12
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_PROMPT)
        _ready_once(repo, script, env)  # warm-up: the page cache and .pyc files
        _bare_once(repo, bare, env)
        resident.cold(through)
        cold = _ready_once(repo, script, through)[1]
        listened = resident.listening(since=time.perf_counter())  # the moot above has ended
        resident.serving(through)
        _ready_once(repo, script, through, resident)  # warm-up: its first fork
        starts = {
            "moot": lambda: _ready_once(repo, script, env),
            "resident": lambda: _ready_once(repo, script, through, resident),
            "bare": lambda: (*_bare_once(repo, bare, env), 0.0),
        }
        times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in starts}
        for n in range(runs):
            order = list(starts)[n % 3 :] + list(starts)[: n % 3]
            for name in order:
                times[name].append(starts[name]())
        readies = [t[0] for t in times["moot"]]
        opens, cpus = [t[1] for t in times["moot"]], [t[2] for t in times["moot"]]
        served, served_cpus = [t[1] for t in times["resident"]], [t[2] for t in times["resident"]]
        bares, bare_cpus = [b[0] for b in times["bare"]], [b[1] for b in times["bare"]]
        rows.append(
            Row(
                f"`moot --plain`: process start to a ready prompt, p50 / p90 over {runs} runs",
                f"{ms(median(readies))} / {ms(percentile(readies, 90))}",
                TARGET_READY,
            )
        )
        rows.append(
            Row(
                "`moot --plain`: process start to the session open (in a thread meanwhile), "
                "p50 / p90",
                f"{ms(median(opens))} / {ms(percentile(opens, 90))}",
            )
        )
        rows.append(
            ratio_row(
                "`moot --plain`: session line shown / a bare prompt_toolkit prompt, same rounds",
                opens,
                bares,
                "<= 1.25x",
            )
        )
        rows.append(
            Row(
                "  same, CPU time by then (user + system): `moot --plain` / the bare prompt",
                f"{ms(median(cpus))} / {ms(median(bare_cpus))} = "
                f"{median(cpus) / median(bare_cpus):.2f}x",
                "(reference)",
            )
        )
        what = (
            "`moot --plain`, resident: session line shown / a bare prompt_toolkit prompt, "
            "same rounds"
        )
        failed = resident.unserved(what, runs + 1, "<= 1.25x")
        rows.append(failed or ratio_row(what, served, bares, "<= 1.25x"))
        if failed is None:
            rows.append(
                Row(
                    "  same, CPU time by then: the resident moot's fork + its client / the bare "
                    "prompt",
                    f"{ms(median(served_cpus))} / {ms(median(bare_cpus))} = "
                    f"{median(served_cpus) / median(bare_cpus):.2f}x",
                    "(reference)",
                )
            )
        rows.append(cold_row("session line shown", cold, listened))
        rng = random.Random(11)
        latencies: list[float] = []
        for _ in range(1 if quick else 3):
            latencies += _echo_run(repo, script, env, rng)
        rows.append(
            Row(
                "`moot --plain`: a typed key echoes while the answer streams at 1,000 tokens/s, "
                f"p50 / p95 / max over {len(latencies)} keys",
                f"{ms(median(latencies))} / {ms(percentile(latencies, 95))} / {ms(max(latencies))}",
                TARGET_ECHO,
            )
        )
    return rows
