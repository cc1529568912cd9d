"""moot's git runs on the host, so a repository must not name another one as its git
directory: `git_log` and `git_show` read it, `git_commit` writes to it. A git directory outside
the work tree is taken only where it names the work tree back (a linked worktree, a submodule).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from moot.workspace import Workspace
from moot.workspace.git import GitError, workspace_repo

ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
       "GIT_COMMITTER_EMAIL": "a@b", "PATH": "/usr/bin:/bin"}  # fmt: skip


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd, capture_output=True, text=True, check=True, env=ENV,
    )  # fmt: skip
    return done.stdout


@pytest.fixture
def private(tmp_path: Path) -> Path:
    """Someone's private repository beside the workspace."""
    repo = tmp_path / "private"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "secret.txt").write_text("SECRET\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "private history")
    return repo


def _log(workspace: Path) -> str:
    with workspace_repo(Workspace(workspace)) as repo:
        return repo.git("log", "--format=%s")


def test_a_git_file_naming_another_repository_is_refused(tmp_path: Path, private: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text("gitdir: ../private/.git\n")  # as a repository's archive ships it
    with pytest.raises(GitError, match="does not name it back"):
        _log(ws)


def test_a_git_symlink_to_another_repository_is_refused(tmp_path: Path, private: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").symlink_to(private / ".git")
    with pytest.raises(GitError, match="does not name it back"):
        _log(ws)


def test_a_commondir_naming_another_repository_is_refused(tmp_path: Path, private: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / ".git" / "commondir").write_text("../../private/.git\n")
    with pytest.raises(GitError, match="common"):
        _log(ws)


def test_a_linked_worktree_and_a_submodule_work_as_before(tmp_path: Path, private: Path) -> None:
    linked = tmp_path / "linked"
    git(private, "worktree", "add", "-q", str(linked))
    assert _log(linked) == "private history\n"
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    git(outer, "submodule", "add", "-q", str(private), "sub")
    assert _log(outer / "sub") == "private history\n"


def test_a_config_that_includes_an_endless_file_is_refused_in_bounded_memory(
    tmp_path: Path,
) -> None:
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    with (ws / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = /dev/zero\n")
    # In a process of its own, its address space capped (gitpython read /dev/zero until the
    # machine ran out: 24 GB, then the OOM killer), and its peak told.
    probe = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from moot.workspace import Workspace\n"
        "from moot.workspace.git import GitError, workspace_repo\n"
        "try:\n"
        "    with workspace_repo(Workspace(sys.argv[1])): pass\n"
        "except GitError as exc:\n"
        "    print(exc)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(ws)], capture_output=True, text=True, timeout=60
    )
    said, peak_kib = done.stdout.rsplit("\n", 2)[:2]
    assert "bad config line" in said, done.stderr
    assert int(peak_kib) < 512 * 1024
