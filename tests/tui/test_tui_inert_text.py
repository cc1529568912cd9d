"""What the app shows from untrusted places reaches the terminal as text: a file a tool read, the
model's text, a file name, the branch a repository's `.git/HEAD` names. The app runs in a real
terminal (tmux), and all it sent is searched for the sequences they held."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_tui_tmux import Terminal, terminal  # noqa: F401 (the same skip; the fixture)

TITLE = "\x1b]2;{}\x07"
"""OSC 2: set the window title (OSC 52, the clipboard, is the same shape)."""


def test_no_sequence_in_a_file_the_model_or_a_branch_name_reaches_the_terminal(
    terminal: Terminal,  # noqa: F811
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
    moot = f"{sys.executable} -m moot.cli"
    command = f"{moot} --model scripted:{script} --permission-mode acceptEdits; sleep 60"
    terminal.tmux("new-session", "-d", "-s", terminal.name, "-x", "140", "-y", "40",
                  "-c", str(repo), command)  # fmt: skip
    shown = tmp_path / "terminal.log"
    terminal.tmux("pipe-pane", "-t", terminal.name, f"cat >> {shown}")

    terminal.wait_for(lambda s: "scripted:" in s, "the app")
    terminal.keys("go", "Enter")
    terminal.wait_for(lambda s: "all read" in s, "the answer")
    terminal.keys("Down")
    terminal.wait_for(lambda s: "PWNED-FILE world" in s, "notes.txt's line, in the details", 10)
    title = terminal.tmux("display", "-p", "-t", terminal.name, "#{pane_title}")
    sent = shown.read_bytes()

    assert "PWNED" not in title
    for word in ("BRANCH", "FILE", "NAME", "MODEL"):
        assert f"\x1b]2;PWNED-{word}".encode() not in sent, word
