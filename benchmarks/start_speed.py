"""Start-up in a big repository: `moot -p` from process start to its first model request, in the
generated 100,000-file monorepo (`big_repo.py`, committed once into a copy) against a small
repository, alternating round by round so that the machine's load weighs on both alike.

The first request is timestamped by the local model server (tests/model_server.py, answering
in the Anthropic wire format) as it arrives: what the person waits for before the model starts.
Nothing before it may grow with the repository (issue 31: the session waited for a `git status`
that lists untracked files, 250 ms there); the target is the ratio of the medians.

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


def first_requests(repos: dict[str, Path], runs: int, home: Path) -> dict[str, list[float]]:
    """Seconds from spawning `moot -p` in each repository to its first request arriving,
    the repositories taken in turn, their order reversed every other round."""
    times: dict[str, list[float]] = {name: [] for name in repos}
    order = list(repos)
    with ModelServer() as server:
        env = {k: v for k, v in child_env().items() if not k.startswith(("ANTHROPIC_", "MOOT_"))}
        env |= {"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": server.url}
        env |= {"MOOT_HOME": str(home)}
        command = [str(VENV_BIN / "moot"), "-p", "say ok", "--model", MODEL]
        for n in range(runs + 1):  # the first warms the page cache and .pyc files
            for name in order if n % 2 else reversed(order):
                server.reply(Reply(body=anthropic("ok")))
                seen = len(server.requests)
                started = time.perf_counter()
                proc = subprocess.Popen(
                    command, cwd=repos[name], env=env, stdout=subprocess.DEVNULL
                )
                while len(server.requests) == seen and proc.poll() is None:
                    time.sleep(0.0005)
                took = time.perf_counter() - started
                proc.wait()
                if len(server.requests) == seen:
                    raise RuntimeError(f"moot -p in {name} sent no request")
                if n:
                    times[name].append(took)
    return times


def ratio_row(what: str, over: list[float], under: list[float], target: str) -> Row:
    """`what`: the ratio of two medians, with both."""
    a, b = statistics.median(over), statistics.median(under)
    return Row(what, f"{a / b:.2f}x ({ms(a)} / {ms(b)})", target)


def run(*, quick: bool) -> list[Row]:
    big = committed_repo()
    with tempfile.TemporaryDirectory(prefix="moot-bench-start-") as tmp:
        small = small_repo(Path(tmp) / "small")
        runs = 4 if quick else 15
        times = first_requests({"big": big, "small": small}, runs, Path(tmp) / "home")
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
    ]
