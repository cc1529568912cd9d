"""Commits of the agent's own files, and their undo.

Agent commits carry a `Moot-Session: <session id>` trailer. `AutoCommit` commits what a turn
changed as the turn ends; `commit_specs` commits exactly the paths it is given, whatever else
is staged; `undo_last_agent_commit` takes back only an agent commit, and only while nothing
would be lost (see its docstring). They run git as every git tool does (`moot.workspace.git`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from moot.workspace.git import NO_DRIVERS, GitError, GitRepo, open_repo, workspace_repo
from moot.workspace.host_git import COMMIT_HOOKS, host_git_at_start
from moot.workspace.paths import Workspace

TRAILER_KEY = "Moot-Session"
"""The commit trailer that marks a commit moot made; its value is the session id."""
_TRAILER_LINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*: ")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


class UndoRefused(GitError):
    """`undo_last_agent_commit` will not take HEAD back; the message says why."""


ChangedFiles = Callable[[], Iterable[str | os.PathLike[str]]]
"""The files the agent changed this session: absolute, or relative to the workspace root."""


class AgentCommit(msgspec.Struct, frozen=True):
    """A commit moot made or took back."""

    sha: str
    branch: str | None
    """The branch it is (or was) on; None on a detached HEAD."""
    subject: str
    files: tuple[str, ...]
    """The paths it changed, from the top of the work tree."""
    note: str = ""
    """What the person or model should know: hooks of the repository that did not run."""

    @property
    def short(self) -> str:
        return self.sha[:7]


def with_trailer(message: str, session_id: str) -> str:
    """`message` with the `Moot-Session` trailer, joined to an existing trailer block if any."""
    body = message.strip()
    line = f"{TRAILER_KEY}: {' '.join(session_id.split()) or 'unknown'}"
    paragraphs = _PARAGRAPH_BREAK.split(body)
    last = paragraphs[-1].splitlines()
    if len(paragraphs) > 1 and all(_TRAILER_LINE.match(text) for text in last):
        return f"{body}\n{line}\n"
    return f"{body}\n\n{line}\n"


def agent_session(message: str) -> str | None:
    """The session id in a commit message's `Moot-Session` trailer; None when it has none."""
    paragraphs = _PARAGRAPH_BREAK.split(message.strip())
    if len(paragraphs) < 2:
        return None
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(":")
        if sep and key == TRAILER_KEY and value.strip():
            return value.strip()
    return None


def turn_message(prompt: str) -> str:
    """A commit subject for a turn: `moot: ` and the prompt's first line, cut to fit 72."""
    first = next((line.strip() for line in prompt.splitlines() if line.strip()), "")
    first = first or "changes"
    room = 72 - len("moot: ")
    return "moot: " + (first if len(first) <= room else first[: room - 1].rstrip() + "…")


def commit_specs(repo: GitRepo, specs: list[str], message: str) -> AgentCommit:
    """Commit the changes under `specs` and nothing else, whatever else is staged.

    Other staged changes stay staged, untouched; new files under `specs` are added, deleted
    ones removed. `specs` must not be empty (that would mean everything).

    Raises:
        GitError: Nothing to commit under `specs`, or git refused (a hook, a merge...).
    """
    if not specs:
        raise GitError("nothing to commit: no paths given")
    if not message.strip():
        raise GitError("give a commit message")
    entries = repo.status(specs, all_untracked=True)
    if not entries:
        raise GitError(
            "nothing to commit: those files have no uncommitted changes"
            " (ignored files are never committed)"
        )
    conflicts = [repo.shown(e.path) for e in entries if e.kind == "conflict"]
    if conflicts:
        raise GitError(f"resolve the merge conflicts first: {', '.join(conflicts)}")
    files = sorted({e.path for e in entries} | {e.orig for e in entries if e.orig})
    repo.refuse_filtered(files, "commit it")
    exact = [":(literal)" + path for path in files]
    repo.git("add", "--all", "--", *exact, read_only=False)
    # --only: commit just these paths, from the work tree; the rest of the index is left alone.
    repo.git("commit", "--quiet", "--only", "-m", message, "--", *exact, read_only=False)
    sha = repo.git("rev-parse", "HEAD").strip()
    subject = message.strip().splitlines()[0]
    note = repo.skipped_hooks(COMMIT_HOOKS)
    return AgentCommit(sha, repo.branch(), subject, tuple(files), note)


def changed_specs(repo: GitRepo, workspace: Workspace, changed_files: ChangedFiles) -> list[str]:
    """Pathspecs for the files the agent changed, those inside the workspace."""
    specs: list[str] = []
    for path in changed_files():
        normal = os.path.normpath(os.path.join(workspace.root, path))
        if workspace.contains(normal) and normal != str(workspace.root):
            specs.append(repo.spec(Path(normal)))
    return sorted(set(specs))


class AutoCommit:
    """At the end of a turn, commit the files the agent changed, as an agent commit.

    Files the agent changed but that are already committed (or ignored) are skipped, so a turn
    that changed nothing makes no commit. A file the person edited too is committed as it is
    on disk: git cannot tell whose lines are whose.
    """

    def __init__(
        self,
        workspace: Workspace,
        session_id: str,
        changed_files: ChangedFiles,
    ) -> None:
        """Remember where to commit, as whom, and how to learn what the agent changed.

        Args:
            workspace: The session's workspace; files outside it are never committed.
            session_id: Goes into the `Moot-Session` trailer of every commit.
            changed_files: The paths the agent wrote this session (absolute or from the root).
        """
        self.workspace = workspace
        self.session_id = session_id
        self.changed_files = changed_files

    def commit_turn(self, prompt: str) -> AgentCommit | None:
        """Commit what the agent changed; blocking, so call it from a worker thread.

        Args:
            prompt: The person's prompt for the turn; its first line becomes the subject.

        Returns:
            The commit, or None when there was nothing to commit.

        Raises:
            GitError: Not a repository, a hook refused, a merge in progress...
        """
        with workspace_repo(self.workspace) as repo:
            specs = changed_specs(repo, self.workspace, self.changed_files)
            if not specs or not repo.status(specs, all_untracked=True):
                return None
            message = with_trailer(turn_message(prompt), self.session_id)
            return commit_specs(repo, specs, message)


def undo_last_agent_commit(
    root: str | os.PathLike[str], *, session_id: str | None = None
) -> AgentCommit:
    """Take back HEAD if moot made it, restoring the files it touched to how they were before.

    This is `git reset --keep HEAD~1`: the branch moves back one commit and only the files that
    commit touched change on disk; other local changes stay as they are. It is refused unless
    nothing can be lost: HEAD must carry the `Moot-Session` trailer (of `session_id`, when
    given), have exactly one parent, have no uncommitted changes in the files it touched, and
    not be on any remote-tracking branch (a pushed commit is never rewritten; revert it
    instead). The commit itself stays in the reflog; its hash is returned to say so.

    It runs no hooks and no filters (a file the commit touched that goes through one is
    refused), as the git tools do; config files in the work tree are read as they are now.

    Returns:
        The commit that was taken back.

    Raises:
        UndoRefused: One of the conditions above does not hold.
        GitError: Not a repository, no commits, or git failed.
    """
    with open_repo(root, host_git_at_start(root)) as repo:
        try:
            head = repo.repo.head.commit
        except ValueError:
            raise UndoRefused("nothing to undo: the repository has no commits") from None
        message = str(head.message)
        short = head.hexsha[:7]
        found = agent_session(message)
        if found is None:
            raise UndoRefused(f"HEAD {short} is not a moot commit (no {TRAILER_KEY} trailer)")
        if session_id is not None and found != session_id:
            raise UndoRefused(f"HEAD {short} was made by another moot session ({found})")
        if len(head.parents) != 1:
            raise UndoRefused(f"HEAD {short} is a merge or the first commit; undo it by hand")
        touched = repo.git(
            "diff", "--name-only", "-z", "--no-renames", *NO_DRIVERS, "HEAD~1", "HEAD"
        )
        files = tuple(path for path in touched.split("\0") if path)
        repo.refuse_filtered(list(files), "undo it")
        dirty = repo.status([":(literal)" + path for path in files], all_untracked=True)
        if files and dirty:
            names = ", ".join(sorted({e.path for e in dirty}))
            raise UndoRefused(f"uncommitted changes to files {short} touched: {names}")
        if repo.git("for-each-ref", "--count=1", f"--contains={head.hexsha}", "refs/remotes"):
            raise UndoRefused(f"HEAD {short} is already pushed; revert it instead")
        branch = repo.branch()
        # To the parent by hash, and only if HEAD has not moved since the checks above.
        if repo.git("rev-parse", "HEAD").strip() != head.hexsha:
            raise UndoRefused("HEAD moved while checking; try again")
        repo.git("reset", "--quiet", "--keep", head.parents[0].hexsha, read_only=False)
        subject = message.strip().splitlines()[0] if message.strip() else ""
        return AgentCommit(head.hexsha, branch, subject, files)
