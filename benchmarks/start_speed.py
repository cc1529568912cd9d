"""Start-up in a big repository: `moot -p` from process start to its first model request, in the
generated 100,000-file monorepo (`big_repo.py`, committed once into a copy) against a small
repository, alternating round by round so that the machine's load weighs on both alike.

The first request is timestamped by the local model server (tests/model_server.py, answering
in the Anthropic wire format) as it arrives: what the person waits for before the model starts.
Nothing before it may grow with the repository (issue 31: the session waited for a `git status`
that lists untracked files, 250 ms there); the target is the ratio of the medians. In the same
rounds, `moot -p` in the small repository through the resident moot (`MOOT_RESIDENT=1`,
`resident_moot.py`), beside the in-process one (`MOOT_RESIDENT=0`); its cold start, which finds
no resident process and starts one, is given on its own.

`committed_repo()` is shared with the app's and the REPL's rounds (`app_speed.py`,
`repl_speed.py`): the generated tree has no commit, and a repository's status reads its index.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from big_repo import repository, scratch_copy
from report import Row, ms
from resident_moot import ResidentMoot, cold_row
from timing import VENV_BIN, child_env

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from model_server import ModelServer, Reply  # noqa: E402
from wire_builders import anthropic  # noqa: E402

NAME = "start"
TARGET_RATIO = "<= 1.1x"
MODEL = "anthropic/claude-haiku-4-5"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def committed_repo() -> Path:
    """A copy of the 100,000-file tree with everything committed, made once beside it."""
    source = repository()
    root = source.with_name(source.name + "-committed")
    marker = root.with_name(root.name + ".done")
    if marker.exists() and root.is_dir():
        return root
    if root.exists():
        subprocess.run(["rm", "-rf", str(root)], check=True)
    scratch_copy(source, root)
    _commit(root)
    marker.write_text("complete\n")
    return root


def small_repo(root: Path) -> Path:
    """A small committed repository with memory, under `root`."""
    root.mkdir(parents=True)
    for i in range(20):
        (root / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    (root / "AGENTS.md").write_text("# Project\n\nRun the tests with `make test`.\n")
    _commit(root)
    return root


def _commit(root: Path) -> None:
    env = {**child_env(), **GIT_ENV}
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "generated"], cwd=root, check=True, env=env)
    # The files' stat data, so a status reads the index as a person's repository has it.
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=False, env=env)


class FirstRequests:
    """`moot -p` against the local model server: seconds from its spawn to its first request
    arriving."""

    def __init__(self, server: ModelServer, home: Path) -> None:
        self.server = server
        env = {k: v for k, v in child_env().items() if not k.startswith(("ANTHROPIC_", "MOOT_"))}
        env |= {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.url}
        self.env = env | {"MOOT_HOME": str(home)}
        self.command = [str(VENV_BIN / "moot"), "-p", "say ok", "--model", MODEL]

    def time(self, cwd: Path, env: dict[str, str]) -> float:
        """One `moot -p` in `cwd` with `env` (`self.env` and more); it has ended on return."""
        self.server.reply(Reply(body=anthropic("ok")))
        seen = len(self.server.requests)
        started = time.perf_counter()
        # stdin a file, as ever for a command a script runs: a resident moot is handed it.
        proc = subprocess.Popen(
            self.command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        while len(self.server.requests) == seen and proc.poll() is None:
            time.sleep(0.0005)
        took = time.perf_counter() - started
        proc.wait()
        if len(self.server.requests) == seen:
            raise RuntimeError(f"moot -p in {cwd} sent no request")
        return took


def ratio_row(what: str, over: list[float], under: list[float], target: str) -> Row:
    """`what`: the ratio of two medians, with both."""
    a, b = statistics.median(over), statistics.median(under)
    return Row(what, f"{a / b:.2f}x ({ms(a)} / {ms(b)})", target)


def run(*, quick: bool) -> list[Row]:
    big = committed_repo()
    with (
        tempfile.TemporaryDirectory(prefix="moot-bench-start-") as tmp,
        ModelServer() as server,
        ResidentMoot() as resident,
    ):
        small = small_repo(Path(tmp) / "small")
        runs = 4 if quick else 15
        requests = FirstRequests(server, Path(tmp) / "home")
        env = resident.env(requests.env, resident=False)
        through = resident.env(requests.env, resident=True)
        starts = {
            "big": lambda: requests.time(big, env),
            "small": lambda: requests.time(small, env),
            "resident": lambda: requests.time(small, through),
        }
        requests.time(big, env)  # warm-up: the page cache and .pyc files
        requests.time(small, env)
        resident.cold(through)
        cold = requests.time(small, through)
        listened = resident.listening(since=time.perf_counter())  # that moot has ended
        resident.serving(through)
        requests.time(small, through)  # warm-up: its first fork
        times: dict[str, list[float]] = {name: [] for name in starts}
        for n in range(runs):
            # The big repository before the small one every other round, the resident moot
            # first, second or third in turn: the machine's load weighs on all alike.
            order = ["big", "small"] if n % 2 else ["small", "big"]
            order.insert(n % 3, "resident")
            for name in order:
                times[name].append(starts[name]())
        what = "`moot -p` start to first request, resident / in process, small repo (same rounds)"
        unserved = resident.unserved(what, runs + 1, "(reference)")
    return [
        Row(
            f"`moot -p` start to first request, small repo, p50 over {runs}",
            ms(statistics.median(times["small"])),
            "(reference)",
        ),
        ratio_row(
            "`moot -p` start to first request, 100k-file repo / small repo (same rounds)",
            times["big"],
            times["small"],
            TARGET_RATIO,
        ),
        unserved or ratio_row(what, times["resident"], times["small"], "(reference)"),
        cold_row("`moot -p` start to first request", cold, listened),
    ]
