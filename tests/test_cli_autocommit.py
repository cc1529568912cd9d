"""`MOOT_AUTO_COMMIT=1 moot -p` commits the turn's edits; `moot undo` takes the commit back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """\
turns:
  - tool_calls: [{name: read, arguments: {path: notes.txt}}]
  - tool_calls: [{name: edit, arguments: {path: notes.txt, old: wrold, new: world}}]
  - text: Fixed.
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_auto_commit_then_undo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "notes.txt").write_text("hello wrold\n")
    (repo / "other.txt").write_text("untouched by the agent\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "init")
    (tmp_path / "s.yaml").write_text(SCRIPT)
    env = os.environ | {"MOOT_HOME": str(tmp_path / "home"), "MOOT_AUTO_COMMIT": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "fix the typo", "--model",
         f"scripted:{tmp_path / 's.yaml'}", "--permission-mode", "acceptEdits"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "committed" in run.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "moot: fix the typo"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["notes.txt"]
    assert "Moot-Session: ses_" in git(repo, "log", "-1", "--format=%B")
    undo = subprocess.run(
        [sys.executable, "-m", "moot.cli", "undo"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert undo.returncode == 0, undo.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "init"
    assert (repo / "notes.txt").read_text() == "hello wrold\n"
    again = subprocess.run(
        [sys.executable, "-m", "moot.cli", "undo"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 1  # HEAD is the person's own commit now: refused
    assert (repo / "other.txt").exists()
