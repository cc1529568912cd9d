"""What moot runs on the host is the person's program, never one the repository ships on a PATH
entry that names the workspace (`node_modules/.bin`, `./bin`, an activated `.venv/bin`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from moot_cli import RunMoot

# What moot (and the libraries it uses) may look up on PATH and run on the host.
PLANTED = (
    "git", "rg", "nice", "bwrap", "python3", "python", "basedpyright-langserver",
    "pyright-langserver", "wl-paste", "xclip", "xsel", "wl-copy", "docker", "tmux", "vi",
)  # fmt: skip


def _plant(directory: Path, markers: Path) -> None:
    """A program for each of `PLANTED` that leaves a marker, then does what the real one does
    (so a run that uses it goes on as usual and only the marker tells)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in PLANTED:
        real = shutil.which(name) or "/bin/false"
        script = directory / name
        script.write_text(f'#!/bin/sh\necho "$0 $*" >> {markers}/{name}\nexec {real} "$@"\n')
        script.chmod(0o755)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_no_program_the_workspace_puts_on_path_runs_on_the_host(
    tmp_path: Path, moot: RunMoot, tmp_path_factory: pytest.TempPathFactory
) -> None:
    markers = tmp_path_factory.mktemp("markers")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "app.py").write_text("def main():\n    return 1\n")
    (tmp_path / ".gitignore").write_text("home/\n")
    for directory in ("node_modules/.bin", "bin", ".venv/bin"):
        _plant(tmp_path / directory, markers)
    script = tmp_path.parent / f"{tmp_path.name}-script.json"
    calls = [
        {"name": "glob", "arguments": {"pattern": "*.py"}},
        {"name": "grep", "arguments": {"pattern": "main"}},
        {"name": "git_status", "arguments": {}},
        {"name": "git_log", "arguments": {}},
        {"name": "repo_map", "arguments": {}},
        {"name": "read", "arguments": {"path": "app.py"}},
        {"name": "edit", "arguments": {"path": "app.py", "old": "1", "new": "2"}},
        {"name": "bash", "arguments": {"command": "echo hi"}},
        {"name": "git_commit", "arguments": {"message": "m"}},
    ]
    turns = [{"tool_calls": [call]} for call in calls]
    turns.append({"tool_calls": [{"name": "finish", "arguments": {"message": "done"}}]})
    script.write_text(json.dumps({"turns": turns}))
    path = os.pathsep.join(
        ("node_modules/.bin", "bin", str(tmp_path / ".venv" / "bin"), "", os.environ["PATH"])
    )
    done = moot(
        "-p", "go", "--model", f"scripted:{script}", "--permission-mode", "bypassPermissions",
        "--output-format", "json",
        env={"PATH": path, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
             "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ran = {marker.name: marker.read_text() for marker in markers.iterdir()}
    assert ran == {}
    log = subprocess.run(["git", "log", "--oneline"], cwd=tmp_path, capture_output=True, text=True)
    assert log.stdout.strip(), "the run's git_commit went through the person's git"
