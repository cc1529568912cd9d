"""Nothing slow before the first request: a session opens without waiting for `git status`,
and its first request still carries the memory, the skills and the status git found by then
(`client/facts.py::GitProbe`, `client/late_facts.py`).

The slow status is a real one held back at its seam (`facts.git_summary`, which the probe's
thread calls): a gate the test opens, so no test waits on a clock."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_server import ModelServer, Reply
from moot.client import facts
from moot.protocol import ops
from skill_files import git_repo, skill
from skill_session import open_session, point_at, run, system_of
from wire_builders import anthropic

MEMORY = "# Shop\n\nRun the tests with `make test`.\n"


class HeldStatus:
    """`git status` that answers only once the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.answered = threading.Event()
        self._real = facts.git_summary

    def __call__(self, root: Path) -> str:
        if not self.gate.wait(timeout=60):
            raise TimeoutError("the test never opened the gate")
        try:
            return self._real(root)
        finally:
            self.answered.set()

    def answer(self) -> None:
        """Let git answer, and wait (bounded) until it has."""
        self.gate.set()
        assert self.answered.wait(timeout=30)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    with ModelServer() as running:
        point_at(running, monkeypatch)
        yield running


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldStatus]:
    status = HeldStatus()
    monkeypatch.setattr(facts, "git_summary", status)
    yield status
    status.gate.set()  # the probe's thread ends with the test


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real repository with one commit, one file changed since, memory and a skill."""
    root = git_repo(tmp_path / "shop")
    (root / "app.py").write_text("print('hi')\n")
    (root / "AGENTS.md").write_text(MEMORY)
    skill(root / ".moot/skills/notes", description="Keeps notes. Use when asked to note.")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "HOME": str(tmp_path)}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "checkout", "-qb", "main"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=root, check=True, env=env)
    (root / "app.py").write_text("print('hello')\n")
    return root


def _carries_memory_and_skills(body: dict) -> None:
    assert "Run the tests with `make test`." in system_of(body)
    (tool,) = [t for t in body["tools"] if t["name"] == "skill"]
    assert "notes: Keeps notes." in tool["description"]


async def test_a_session_opens_and_answers_while_git_status_has_not_finished(
    server: ModelServer, held: HeldStatus, repo: Path
) -> None:
    """Fails on the old code: the session waited for the status as it opened (1.5 s at most,
    then said it was unknown); now it opens at once, and the first request says the branch and
    that the status is not read yet, beside the memory and the skills. The prompt settles at
    the first op: a status found later does not change the next request's prompt."""
    server.reply(Reply(body=anthropic("one", n=1)), Reply(body=anthropic("two", n=2)))
    client = open_session(repo)
    try:
        assert not held.answered.is_set()
        await run(client, ops.UserTurn(text="hi"))
        held.answer()
        await run(client, ops.UserTurn(text="again"))
    finally:
        await client.close()
    first, second = (request.json for request in server.requests)
    assert "- Git: on branch main; status not read yet (`git_status` reads it)" in system_of(first)
    _carries_memory_and_skills(first)
    assert system_of(second) == system_of(first)


async def test_a_status_git_found_before_the_first_op_is_in_the_first_request(
    server: ModelServer, held: HeldStatus, repo: Path
) -> None:
    """Fails on the old code: the prompt was rendered as the session opened, so a status git
    found after that never reached the model."""
    server.reply(Reply(body=anthropic("ok", n=1)))
    client = open_session(repo)
    try:
        held.answer()
        await run(client, ops.UserTurn(text="hi"))
    finally:
        await client.close()
    (request,) = server.requests
    system = system_of(request.json)
    assert "- Git: on branch main; 1 modified (`git_status` lists them" in system
    _carries_memory_and_skills(request.json)
