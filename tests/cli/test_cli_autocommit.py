"""`MOOT_AUTO_COMMIT=1 moot -p` commits the turn's edits; `moot undo` takes the commit back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hostile_git import VECTORS, Vector, command_for, hook_scripts, ran
from moot.protocol import events as ev

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


HOSTILE_SCRIPT = """\
turns:
  - tool_calls: [{name: read, arguments: {path: notes.txt}}]
  - tool_calls: [{name: edit, arguments: {path: notes.txt, old: wrold, new: world}}]
  - tool_calls: [{name: write, arguments: {path: .husky/pre-commit, content: "#!/bin/sh"}}]
  - tool_calls: [{name: bash, arguments: {command: "echo boom | tee .husky/pre-commit"}}]
  - tool_calls: [{name: bash, arguments: {command: "chmod -x .husky/pre-commit"}}]
  - text: Fixed.
"""
FILTERING = {"filter", "filter_process", *(v.name for v in VECTORS if "include" in v.name)}
"""Vectors whose `.gitattributes` send every file through a filter: nothing is committed."""


def hostile_repo(tmp_path: Path, vectors: list[Vector], markers: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "notes.txt").write_text("hello wrold\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "init")
    for vector in vectors:  # all of it there when moot starts, as in a cloned repository
        vector.before(repo, command_for(vector, markers))
        vector.after(repo, command_for(vector, markers))
    (tmp_path / "s.yaml").write_text(HOSTILE_SCRIPT)
    return repo


def moot(tmp_path: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "MOOT_HOME": str(tmp_path / "home"),
        "MOOT_AUTO_COMMIT": "1",
        "MOOT_SANDBOX": "bubblewrap",
    }
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", *args], cwd=repo, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip


def turn(tmp_path: Path, repo: Path) -> subprocess.CompletedProcess[str]:
    return moot(tmp_path, repo, "-p", "fix the typo", "--model", f"scripted:{tmp_path / 's.yaml'}",
                "--permission-mode", "acceptEdits",
                "--allowedTools", "Bash(echo:*),Bash(tee:*),Bash(chmod:*)",
                "--output-format", "events")  # fmt: skip


def needs_bubblewrap() -> None:
    if shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap is not installed")


def test_a_hostile_repository_runs_nothing_through_auto_commit_or_undo(tmp_path: Path) -> None:
    """Hooks (in `.git/hooks`, in a workspace `core.hooksPath`, husky 9's), diff drivers,
    signing programs, pagers, editors, aliases, transports: none runs on the host, and the
    model can change neither the hooks directory (read-only in the sandbox: `chmod` runs into
    it) nor a hook in it (a file tool's write, and a file a command line writes, is a
    protected path). Fails on the old code: the hooks ran."""
    needs_bubblewrap()
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = hostile_repo(tmp_path, [v for v in VECTORS if v.name not in FILTERING], markers)
    husky_hook = (repo / ".husky" / "pre-commit").read_text()

    done = turn(tmp_path, repo)

    assert done.returncode == 3, done.stderr
    assert "committed" in done.stderr and "did not run" in done.stderr, done.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "moot: fix the typo"
    assert (repo / ".husky" / "pre-commit").read_text() == husky_hook
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    (shell,) = [e for e in events if isinstance(e, ev.ToolFinished) and e.tool == "bash"]
    assert shell.is_error and "Read-only file system" in shell.content
    refused = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert len(refused) == 2  # the write tool's, and tee's
    assert all("protected path .husky/pre-commit" in r.feedback for r in refused)
    undo = moot(tmp_path, repo, "undo")
    assert undo.returncode == 0, undo.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "init"
    assert ran(markers) == []


def test_files_that_go_through_a_filter_are_not_auto_committed(tmp_path: Path) -> None:
    """The filters run nowhere, and the turn's commit is skipped with the reason."""
    needs_bubblewrap()
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = hostile_repo(tmp_path, [v for v in VECTORS if v.name in FILTERING], markers)

    done = turn(tmp_path, repo)
    undo = moot(tmp_path, repo, "undo")

    assert done.returncode == 3, done.stderr
    assert "auto-commit skipped: notes.txt goes through the git filter" in done.stderr
    assert (repo / "notes.txt").read_text() == "hello world\n"
    assert undo.returncode == 1 and "not a moot commit" in undo.stderr
    assert ran(markers) == []


def test_allow_git_hooks_runs_the_hooks_the_session_began_with(tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = hostile_repo(tmp_path, [], markers)
    hook_scripts(repo / ".git" / "hooks", f"touch {markers}/pre-commit", ("pre-commit",))
    (repo / ".moot").mkdir()
    (repo / ".moot" / "settings.json").write_text('{"allowGitHooks": true}')
    (tmp_path / "s.yaml").write_text(SCRIPT)
    assert moot(tmp_path, repo, "trust", "--yes").returncode == 0  # the person's own setting

    done = turn(tmp_path, repo)

    assert done.returncode == 0, done.stderr
    assert "committed" in done.stderr and "did not run" not in done.stderr
    assert ran(markers) == ["pre-commit"]


def test_a_repositorys_auto_commit_and_git_hooks_wait_for_the_persons_approval(
    tmp_path: Path,
) -> None:
    """Issue 28, item 2: a repository's `autoCommit` and `allowGitHooks` took effect silently,
    and its hooks ran on the host at the end of an `acceptEdits` turn."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = hostile_repo(tmp_path, [], markers)
    hook_scripts(repo / ".husky", f"touch {markers}/pre-commit", ("pre-commit",))
    git(repo, "config", "core.hooksPath", ".husky")
    (repo / ".moot").mkdir()
    (repo / ".moot" / "settings.json").write_text('{"autoCommit": true, "allowGitHooks": true}')
    (tmp_path / "s.yaml").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_AUTO_COMMIT"}
    env |= {"MOOT_HOME": str(tmp_path / "home"), "MOOT_SANDBOX": "bubblewrap"}
    run = [sys.executable, "-m", "moot.cli", "-p", "fix the typo", "--model",
           f"scripted:{tmp_path / 's.yaml'}", "--permission-mode", "acceptEdits"]  # fmt: skip

    held = subprocess.run(run, cwd=repo, env=env, capture_output=True, text=True, timeout=120)

    assert held.returncode == 0, held.stderr
    assert (repo / "notes.txt").read_text() == "hello world\n"
    assert git(repo, "log", "-1", "--format=%s").strip() == "init"  # nothing committed
    assert ran(markers) == []
    assert '"autoCommit"' in held.stderr and '"allowGitHooks"' in held.stderr

    assert moot(tmp_path, repo, "trust", "--yes").returncode == 0
    git(repo, "checkout", "-q", "notes.txt")
    approved = subprocess.run(run, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert approved.returncode == 0, approved.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "moot: fix the typo"
    assert ran(markers) == ["pre-commit"]
