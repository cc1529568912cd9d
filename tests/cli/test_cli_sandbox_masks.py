"""End to end: a `Read(...)` deny rule in settings reaches inside the sandbox of `moot -p`.

`cat .env` is refused before it runs (the rule sees the file on the command line); `grep -r`
names no file, so it runs, and the sandbox must keep the secret out of what it finds. Runs on
bubblewrap and on Docker; a backend missing here skips, and fails with `CI=true`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moot.protocol import events as ev
from sandbox_contract import BACKENDS, DOCKER, require

SECRET = "sk-live-do-not-show-the-model"
SCRIPT = """\
turns:
  - tool_calls: [{name: bash, arguments: {command: "cat .env"}}]
  - tool_calls: [{name: bash, arguments: {command: "grep -r TOKEN ."}}]
  - tool_calls: [{name: bash, arguments: {command: "echo TOKEN=leak >> .env"}}]
  - text: done
"""


@pytest.mark.parametrize("backend", ["bubblewrap", "docker"])
def test_a_denied_file_never_reaches_the_model_through_the_shell(
    tmp_path: Path, backend: str
) -> None:
    require(DOCKER if backend == "docker" else BACKENDS[backend])
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    (work / ".env").write_text(f"TOKEN={SECRET}\n")
    (work / "notes.txt").write_text("TOKEN=placeholder\n")
    (work / ".moot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}})
    )
    (tmp_path / "s.yaml").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"} | {"MOOT_SANDBOX": backend}

    allowed = "Bash(cat:*),Bash(grep:*),Bash(echo:*)"

    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{tmp_path / 's.yaml'}",
         "--output-format", "events", "--allowedTools", allowed],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert done.returncode == 3, done.stderr
    assert SECRET not in done.stdout and SECRET not in done.stderr
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    results = [e for e in events if isinstance(e, ev.ToolFinished)]
    refused = [e for e in events if isinstance(e, ev.ApprovalDecided) and not e.approved]
    # `cat .env` and the append (a write of .env: an edit, which asks) never run; the
    # sandbox's read-only mask of it is the contract suite's to show.
    assert len(refused) == 2, "cat .env and the append: refused"
    assert "Read(./.env)" in refused[0].feedback and "writes .env" in refused[1].feedback
    (grep,) = results
    assert not grep.is_error and "./notes.txt:TOKEN=placeholder" in grep.content
    assert ".env" not in grep.content.replace("notes.txt", "")
    assert (work / ".env").read_text() == f"TOKEN={SECRET}\n"


LINK_SCRIPT = """\
turns:
  - tool_calls:
      - {name: read, arguments: {path: hard_env}}
      - {name: grep, arguments: {pattern: TOKEN}}
      - {name: grep, arguments: {pattern: TOKEN, path: hard_env}}
  - tool_calls: [{name: bash, arguments: {command: "cat hard_env; grep -r TOKEN ."}}]
  - tool_calls: [{name: bash, arguments: {command: "ln .env made"}}]
  - text: done
"""


@pytest.mark.parametrize("backend", ["bubblewrap", "docker"])
def test_a_hard_link_to_a_denied_file_never_reaches_the_model(tmp_path: Path, backend: str) -> None:
    """`hard_env` is another name of `.env` (issue 28, item 9): neither the file tools nor the
    sandbox show it, and a link made in the sandbox leads nowhere."""
    require(DOCKER if backend == "docker" else BACKENDS[backend])
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    (work / ".env").write_text(f"TOKEN={SECRET}\n")
    os.link(work / ".env", work / "hard_env")
    (work / "notes.txt").write_text("TOKEN=placeholder\n")
    (work / ".moot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}})
    )
    (tmp_path / "s.yaml").write_text(LINK_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"} | {"MOOT_SANDBOX": backend}

    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{tmp_path / 's.yaml'}",
         "--output-format", "events", "--allowedTools", "Bash(cat:*),Bash(grep:*),Bash(ln:*)"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert done.returncode == 3, done.stderr
    assert SECRET not in done.stdout and SECRET not in done.stderr
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    results = [e for e in events if isinstance(e, ev.ToolFinished)]
    refused = [e for e in events if isinstance(e, ev.ApprovalDecided) and not e.approved]
    assert len(refused) == 1 and "Read(./.env)" in refused[0].feedback, "ln .env: refused"
    # The reads of one turn run together: their results come in any order.
    read, grep, grep_one, shell = sorted(results, key=lambda e: e.tool_call_id)
    assert read.is_error and "hard link" in read.content
    assert "notes.txt" in grep.content and "hard_env" not in grep.content
    assert grep_one.is_error and "hard link" in grep_one.content
    assert "./notes.txt:TOKEN=placeholder" in shell.content
