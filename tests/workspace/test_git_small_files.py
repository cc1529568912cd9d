"""The small files under `.git` that moot reads itself (`HEAD` for the branch, a `.git` file,
`commondir`) are read as plain files only, and bounded: a repository may make any of them a
FIFO (opened plainly, it waits for a writer for good) or a link to `/dev/zero` (read whole, it
took every byte of memory the machine had)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from moot_cli import moot_command, moot_env


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.parametrize("head", ["zero", "fifo"])
def test_a_run_opens_beside_a_head_that_never_ends(tmp_path: Path, head: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".git" / "HEAD").unlink()
    if head == "zero":
        (ws / ".git" / "HEAD").symlink_to("/dev/zero")
    else:
        os.mkfifo(ws / ".git" / "HEAD")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    done = subprocess.run(
        moot_command("-p", "hi", "--model", f"scripted:{script}"),
        cwd=ws, env=moot_env(tmp_path / "home"), capture_output=True, text=True, timeout=60,
        preexec_fn=_capped,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr


def test_a_git_file_or_commondir_that_never_ends_names_no_store(tmp_path: Path) -> None:
    fifo, zero, common = tmp_path / "fifo", tmp_path / "zero", tmp_path / "common"
    for ws in (fifo, zero, common):
        ws.mkdir()
    os.mkfifo(fifo / ".git")
    (zero / ".git").symlink_to("/dev/zero")
    subprocess.run(["git", "init", "-q", str(common)], check=True)
    (common / ".git" / "commondir").symlink_to("/dev/zero")
    # In a process of its own, capped and timed: a regression would hang or fill memory.
    probe = (
        "import sys\n"
        "from moot.permissions.git_history import find_store\n"
        "print([find_store(ws) for ws in sys.argv[1:]])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(fifo), str(zero), str(common)],
        capture_output=True, text=True, timeout=30, preexec_fn=_capped,
    )  # fmt: skip
    assert done.stdout == "[None, None, None]\n", done.stderr


def test_a_config_include_that_is_a_fifo_refuses_moots_git_at_once(tmp_path: Path) -> None:
    """git opens what `include.path` names and waits on a FIFO for a writer: moot's git is
    refused as soon as it waits (`special_files`), saying why, not after the 30 s timeout."""
    from moot.workspace.git_config import GitRefused, find_repository, read_config

    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    os.mkfifo(ws / ".git" / "extra")
    with open(ws / ".git" / "config", "a") as config:
        config.write("[include]\n\tpath = extra\n")
    repo = find_repository(str(ws))
    assert repo is not None

    with pytest.raises(GitRefused, match="a file it includes is a FIFO"):
        read_config(repo)
