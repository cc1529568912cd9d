"""Agent commits at the end of a turn, and taking the last one back, in real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from moot.workspace import Workspace
from moot.workspace.agent_commits import (
    TRAILER_KEY,
    AutoCommit,
    UndoRefused,
    agent_session,
    turn_message,
    undo_last_agent_commit,
    with_trailer,
)
from moot.workspace.git import GitError


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, content in files.items():
        (root / rel).write_text(content)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test Person")
    git(root, "config", "user.email", "test@example.com")
    write(root, {"a.txt": "a\n", "b.txt": "b\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first commit")
    return root


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


class AgentWrites:
    """Stands in for the session's record of the files the agent wrote."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: list[Path] = []

    def __call__(self) -> list[Path]:
        return list(self.paths)

    def write(self, files: dict[str, str]) -> None:
        write(self.root, files)
        self.paths += [self.root / rel for rel in files]


def auto_commit(repo: Path, session_id: str = "ses_1") -> tuple[AutoCommit, AgentWrites]:
    writes = AgentWrites(repo)
    return AutoCommit(Workspace(repo), session_id, writes), writes


def test_a_turn_commits_the_agent_files_with_a_subject_from_the_prompt(repo: Path) -> None:
    auto, agent = auto_commit(repo)
    agent.write({"a.txt": "agent\n", "new.txt": "new\n"})
    write(repo, {"b.txt": "the person's edit\n"})

    made = auto.commit_turn("Fix the parser\n\nIt breaks on empty input.")

    assert made is not None
    assert made.sha == head(repo)
    assert made.files == ("a.txt", "new.txt")
    assert git(repo, "log", "-1", "--format=%B") == (
        f"moot: Fix the parser\n\n{TRAILER_KEY}: ses_1\n\n"
    )
    assert git(repo, "status", "--porcelain") == " M b.txt\n"


def test_a_turn_that_changed_nothing_makes_no_commit(repo: Path) -> None:
    auto, agent = auto_commit(repo)
    before = head(repo)

    assert auto.commit_turn("just look around") is None

    agent.write({"a.txt": "agent\n"})
    assert auto.commit_turn("change a") is not None
    assert auto.commit_turn("nothing new since") is None
    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1"


def test_auto_commit_outside_a_repository_is_a_git_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    auto, agent = auto_commit(plain)
    agent.write({"a.txt": "a\n"})

    with pytest.raises(GitError, match="not a git repository"):
        auto.commit_turn("anything")


def test_undo_restores_the_files_and_keeps_other_local_changes(repo: Path) -> None:
    auto, agent = auto_commit(repo)
    before = head(repo)
    agent.write({"a.txt": "agent\n", "new.txt": "new\n"})
    made = auto.commit_turn("change things")
    assert made is not None
    write(repo, {"b.txt": "the person's edit\n"})

    undone = undo_last_agent_commit(repo)

    assert undone.sha == made.sha
    assert undone.files == ("a.txt", "new.txt")
    assert head(repo) == before
    assert (repo / "a.txt").read_text() == "a\n"
    assert not (repo / "new.txt").exists()
    assert git(repo, "status", "--porcelain") == " M b.txt\n"
    assert made.sha in git(repo, "reflog", "--format=%H")  # recoverable


def test_undo_refuses_a_commit_moot_did_not_make(repo: Path) -> None:
    write(repo, {"a.txt": "by hand\n"})
    git(repo, "commit", "-q", "-am", "the person's commit")
    before = head(repo)

    with pytest.raises(UndoRefused, match="is not a moot commit"):
        undo_last_agent_commit(repo)

    assert head(repo) == before
    assert (repo / "a.txt").read_text() == "by hand\n"


def test_undo_refuses_when_a_touched_file_has_uncommitted_changes(repo: Path) -> None:
    auto, agent = auto_commit(repo)
    agent.write({"a.txt": "agent\n"})
    made = auto.commit_turn("change a")
    assert made is not None
    write(repo, {"a.txt": "the person kept editing\n"})

    with pytest.raises(UndoRefused, match=r"uncommitted changes to files .* touched: a\.txt"):
        undo_last_agent_commit(repo)

    assert head(repo) == made.sha
    assert (repo / "a.txt").read_text() == "the person kept editing\n"


def test_undo_refuses_another_session_a_pushed_commit_and_the_first_commit(
    repo: Path, tmp_path: Path
) -> None:
    auto, agent = auto_commit(repo, session_id="ses_other")
    agent.write({"a.txt": "agent\n"})
    made = auto.commit_turn("change a")
    assert made is not None

    with pytest.raises(UndoRefused, match=r"another moot session \(ses_other\)"):
        undo_last_agent_commit(repo, session_id="ses_mine")

    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    with pytest.raises(UndoRefused, match="already pushed; revert it instead"):
        undo_last_agent_commit(repo)
    assert head(repo) == made.sha

    first = tmp_path / "first"
    first.mkdir()
    git(first, "init", "-q", "-b", "main")
    git(first, "config", "user.name", "T")
    git(first, "config", "user.email", "t@example.com")
    write(first, {"x.txt": "x\n"})
    git(first, "add", "x.txt")
    git(first, "commit", "-q", "-m", with_trailer("moot: start", "ses_1"))
    with pytest.raises(UndoRefused, match="merge or the first commit"):
        undo_last_agent_commit(first)


def test_undo_in_a_repository_without_commits_or_outside_one(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    plain = tmp_path / "plain"
    plain.mkdir()

    with pytest.raises(UndoRefused, match="no commits"):
        undo_last_agent_commit(empty)
    with pytest.raises(GitError, match="not a git repository"):
        undo_last_agent_commit(plain)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Fix it", f"Fix it\n\n{TRAILER_KEY}: ses_1\n"),
        ("Fix it\n\nBecause.\n", f"Fix it\n\nBecause.\n\n{TRAILER_KEY}: ses_1\n"),
        (
            "Fix it\n\nSigned-off-by: A <a@example.com>",
            f"Fix it\n\nSigned-off-by: A <a@example.com>\n{TRAILER_KEY}: ses_1\n",
        ),
    ],
)
def test_the_trailer_joins_an_existing_trailer_block(message: str, expected: str) -> None:
    marked = with_trailer(message, "ses_1")

    assert marked == expected
    assert agent_session(marked) == "ses_1"


def test_only_a_trailer_in_the_last_paragraph_counts() -> None:
    assert agent_session("Fix it") is None
    assert agent_session(f"{TRAILER_KEY}: ses_1") is None  # a subject, not a trailer
    assert agent_session(f"Fix it\n\n{TRAILER_KEY}: ses_1\n\nMore text") is None


def test_turn_messages_fit_a_subject_line() -> None:
    assert turn_message("\n  Add tests  \nmore") == "moot: Add tests"
    assert turn_message("") == "moot: changes"
    long = turn_message("word " * 40)
    assert len(long) <= 72 and long.endswith("word…")
