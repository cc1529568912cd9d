"""Start-up overlaps what it waits for with what it imports (issue 31): a front end's session opens
while its toolkit loads, not after it (the opening's waits on the disk and on subprocesses
overlap the imports of prompt_toolkit for `moot --plain`, Textual for `moot`), and `moot -p`
loads its first request's libraries while its session opens. As a person runs them (the front
ends on a pseudo-terminal); an import hook only watches the order in which modules are asked
for, and every wait is bounded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from model_server import ModelServer, Reply
from wire_builders import anthropic

WATCHER = """\
import importlib.machinery, sys, time

verdict_file, trigger, wanted = sys.argv.pop(1), sys.argv.pop(1), sys.argv.pop(1)
asked = set()


class WaitFirst:
    # `trigger`'s own loader, which first waits (up to 5 s) for `wanted` to have been asked
    # for in another thread. It waits in `exec_module`, where only `trigger`'s own import lock
    # is held (a finder runs under the global one, which would stop every other import).
    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def exec_module(self, module):
        end = time.monotonic() + 5
        while wanted not in asked and time.monotonic() < end:
            time.sleep(0.01)
        with open(verdict_file, "w") as out:
            out.write("early" if wanted in asked else "late")
        self.real.exec_module(module)


class Watch:
    def find_spec(self, name, path=None, target=None):
        first = name not in asked
        asked.add(name)
        if not (first and name == trigger):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None:
            spec.loader = WaitFirst(spec.loader)
        return spec


sys.meta_path.insert(0, Watch())
from moot.cli import main

sys.exit(main())
"""


@pytest.mark.parametrize(
    ("args", "toolkit"),
    [(["--plain"], "prompt_toolkit"), ([], "textual.app")],
    ids=["repl", "app"],
)
def test_the_session_begins_opening_before_the_front_ends_toolkit_loads(
    tmp_path: Path, args: list[str], toolkit: str
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "script.yaml"
    script.write_text('turns:\n  - text: "hello"\n')
    watcher, verdict = tmp_path / "watch.py", tmp_path / "verdict"
    watcher.write_text(WATCHER)
    model = f"scripted:{script}"
    keep = ("PATH", "MOOT_HOME", "GIT_CONFIG_GLOBAL", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "TERM": "xterm-256color"}
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # pexpect never answers a cursor-position request
    child = pexpect.spawn(
        sys.executable,
        [str(watcher), str(verdict), toolkit, "moot.client.local", *args, f"--model={model}"],
        cwd=str(repo),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
    )
    try:
        child.expect_exact("ses_")  # the session is open (the REPL's line, the status line)
    finally:
        child.close(force=True)
    assert verdict.read_text() == "early"


def test_moot_p_loads_the_first_requests_libraries_while_its_session_opens(tmp_path: Path) -> None:
    """httpx is asked for before the session's modules are (it loads in a thread meanwhile); the
    run then does its task as before."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    watcher, verdict = tmp_path / "watch.py", tmp_path / "verdict"
    watcher.write_text(WATCHER)
    with ModelServer() as server:
        server.reply(Reply(body=anthropic("done", n=1)))
        keep = ("PATH", "MOOT_HOME", "GIT_CONFIG_GLOBAL", "PYTHONPATH")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env |= {"HOME": str(tmp_path), "ANTHROPIC_API_KEY": "sk-test"}
        env["ANTHROPIC_BASE_URL"] = server.url
        argv = [str(watcher), str(verdict), "moot.client.local", "httpx", "-p", "hello"]
        done = subprocess.run(
            [sys.executable, *argv, "--model", "anthropic/claude-haiku-4-5"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
    assert verdict.read_text() == "early"
