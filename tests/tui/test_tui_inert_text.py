"""What the app shows from untrusted places reaches the terminal as text: a file a tool read, the
model's text, a file name, the branch a repository's `.git/HEAD` names. The app runs in a real
terminal (tmux), and all it sent is searched for the sequences they held."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None and not os.environ.get("CI"),
    reason="tmux is not installed (CI installs it)",
)

TITLE = "\x1b]2;{}\x07"
"""OSC 2: set the window title (OSC 52, the clipboard, is the same shape)."""


def _tmux(socket: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        ["tmux", "-S", str(socket), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout


def test_no_sequence_in_a_file_the_model_or_a_branch_name_reaches_the_terminal(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    # A repository that came as an archive ships its `.git` as it likes.
    (repo / ".git" / "HEAD").write_text(f"ref: refs/heads/main{TITLE.format('PWNED-BRANCH')}\n")
    (repo / "notes.txt").write_text(f"hello {TITLE.format('PWNED-FILE')} world\n")
    name = f"odd{TITLE.format('PWNED-NAME')}.txt"
    (repo / name).write_text("x\n")
    turns = [
        {
            "text": f"model says {TITLE.format('PWNED-MODEL')} hi",
            "tool_calls": [
                {"name": "read", "arguments": {"path": "notes.txt"}},
                {"name": "read", "arguments": {"path": name}},
            ],
        },
        {"text": "all read"},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    socket = tmp_path / "tmux.sock"
    env = {
        "MOOT_HOME": str(tmp_path / "home"),
        "TERM": "xterm-256color",
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if "PYTHONPATH" in os.environ:  # a worktree's own sources, over the shared editable install
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    moot = f"{sys.executable} -m moot.cli"
    command = f"{moot} --model scripted:{script} --permission-mode acceptEdits; sleep 60"
    try:
        _tmux(socket, env, "new-session", "-d", "-s", "t", "-x", "140", "-y", "40",
              "-c", str(repo), command)  # fmt: skip
        shown = tmp_path / "terminal.log"
        _tmux(socket, env, "pipe-pane", "-t", "t", f"cat >> {shown}")

        def wait_for(text: str, deadline_s: float = 30) -> bool:
            end = time.monotonic() + deadline_s
            while time.monotonic() < end:
                if text in _tmux(socket, env, "capture-pane", "-p", "-t", "t"):
                    return True
                time.sleep(0.05)  # polling another process, bounded by the deadline
            return False

        assert wait_for("scripted:")
        _tmux(socket, env, "send-keys", "-t", "t", "go", "Enter")
        assert wait_for("all read")
        _tmux(socket, env, "send-keys", "-t", "t", "Down")
        shown_as_text = wait_for("PWNED-FILE world", 10)  # notes.txt's line, in the details
        title = _tmux(socket, env, "display", "-p", "-t", "t", "#{pane_title}")
        sent = shown.read_bytes()
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)
    assert "PWNED" not in title
    for word in ("BRANCH", "FILE", "NAME", "MODEL"):
        assert f"\x1b]2;PWNED-{word}".encode() not in sent, word
    assert shown_as_text
