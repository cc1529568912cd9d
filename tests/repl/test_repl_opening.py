"""The REPL's session opens while prompt_toolkit loads, not after it (issue 31): the opening's
waits on the disk and on subprocesses overlap the imports. Through a pseudo-terminal, as a
person runs `moot --plain`; an import hook only watches the order in which modules are asked
for, and every wait is bounded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pexpect

WATCHER = """\
import sys, threading, time

verdict_file = sys.argv.pop(1)
asked = {}
lock = threading.Lock()


class Watch:
    # Notes when a module is first asked for; when prompt_toolkit is, waits (up to 5 s) for
    # the session's opening to have begun in another thread.
    def find_spec(self, name, path=None, target=None):
        with lock:
            first = name not in asked
            asked.setdefault(name, time.monotonic())
        if first and name == "prompt_toolkit":
            end = time.monotonic() + 5
            while "moot.client.local" not in asked and time.monotonic() < end:
                time.sleep(0.01)
            with open(verdict_file, "w") as out:
                out.write("early" if "moot.client.local" in asked else "late")
        return None


sys.meta_path.insert(0, Watch())
from moot.cli import main

sys.exit(main())
"""


def test_the_session_begins_opening_before_prompt_toolkit_loads(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    script = tmp_path / "script.yaml"
    script.write_text('turns:\n  - text: "hello"\n')
    watcher, verdict = tmp_path / "watch.py", tmp_path / "verdict"
    watcher.write_text(WATCHER)
    keep = ("PATH", "MOOT_HOME", "GIT_CONFIG_GLOBAL", "PYTHONPATH")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env |= {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "TERM": "xterm-256color"}
    env["PROMPT_TOOLKIT_NO_CPR"] = "1"  # pexpect never answers a cursor-position request
    child = pexpect.spawn(
        sys.executable,
        [str(watcher), str(verdict), "--plain", "--model", f"scripted:{script}"],
        cwd=str(repo),
        env=env,
        dimensions=(40, 120),
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
    )
    try:
        child.expect_exact("session ses_")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert verdict.read_text() == "early"
    assert child.exitstatus == 0
