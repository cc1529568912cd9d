"""Agent definitions from real files: every rule, precedence, and the peers they make, called
with the scripted provider."""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
from pathlib import Path

import pytest

from moot.client import SetupError
from moot.client.local import SessionOptions, open_client
from moot.protocol import events as ev
from moot.providers.registry import UnknownModel, resolve_model
from moot.skills.agents import discover_agents, load_agent
from moot.skills.places import find_places
from moot.testing import drive_turn
from moot_cli import TIMEOUT, moot_command, moot_env
from skill_files import git_repo

HELPER = "---\nname: helper\ndescription: Answers questions.\nmodel: inherit\n---\nBe helpful.\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no frontmatter\n", "no frontmatter"),
        ("---\ndescription: x\n---\nbody\n", "`name` is required"),
        ("---\nname: has space\ndescription: x\n---\nb\n", "`name` is required"),
        ("---\nname: user\ndescription: x\n---\nb\n", "`user` is the person's name"),
        ("---\nname: a\n---\nb\n", "`description` is required"),
        ("---\nname: a\ndescription: x\nmodel: [1]\n---\nb\n", "`model` must be a string"),
        ("---\nname: a\ndescription: x\ntools: Bash(\n---\nb\n", "`tools` rule 'Bash('"),
        ("---\nname: a\ndescription: x\ntools: {a: 1}\n---\nb\n", "`tools` must be a string"),
    ],
)
def test_each_rule_leaves_the_definition_out(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "a.md"
    path.write_text(text)
    agent, problems = load_agent(tmp_path, path, "project")
    assert agent is None
    assert any(message in p.message and p.severity == "error" for p in problems), problems


def test_fields_precedence_and_names_taken(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".moot/agents").mkdir(parents=True)
    (repo / ".moot/agents/helper.md").write_text(
        "---\nname: helper\ndescription: The project's helper.\ntools: [Read, git_diff]\n"
        "color: blue\n---\nHelp.\n"
    )
    (repo / ".moot/agents/moot.md").write_text("---\nname: moot\ndescription: x\n---\nb\n")
    (repo / ".moot/agents/notes.txt").write_text("not an agent")
    user = tmp_path / "config"
    (user / "agents").mkdir(parents=True)
    (user / "agents/helper.md").write_text(HELPER)

    found, problems = discover_agents(find_places(repo, user, shipped=True), taken={"moot"})

    assert list(found) == ["helper", "diff-reviewer", "test-runner"]
    helper = found["helper"]
    assert (helper.description, helper.tools, helper.instructions, helper.model) == (
        "The project's helper.",
        ("Read", "git_diff"),
        "Help.",
        "",
    )
    messages = sorted(p.message for p in problems)
    assert any(m.startswith("moot ignores `color`") for m in messages)
    assert any(m.startswith("shadowed by") for m in messages)
    assert any("already has an agent named 'moot'" in m for m in messages)


async def test_a_defined_agent_is_a_peer_the_scripted_model_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    work = tmp_path / "work"
    (work / ".moot/agents").mkdir(parents=True)
    (work / ".moot/agents/helper.md").write_text(HELPER)
    script = tmp_path / "script.yaml"
    script.write_text(
        "agents:\n"
        "  moot:\n"
        "    - tool_calls: [{name: call_agent, arguments: {agent_name: helper, message: why}}]\n"
        "    - text: the helper says 42\n"
        "  helper:\n"
        "    - text: '42'\n"
    )
    client = open_client(SessionOptions(cwd=work, model=f"scripted:{script}"))
    try:
        outcome = await drive_turn(client, "ask the helper")
    finally:
        await client.close()
    (called,) = outcome.of(ev.AgentCalled)
    (returned,) = outcome.of(ev.AgentReturned)
    assert (called.agent, called.caller, called.message) == ("helper", "moot", "why")
    assert (returned.agent, returned.output) == ("helper", "42")
    assert outcome.finished.output == "the helper says 42"


def test_agents_chooses_the_roster_and_an_unknown_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    work = tmp_path / "work"
    (work / ".moot/agents").mkdir(parents=True)
    (work / ".moot/agents/helper.md").write_text(HELPER)
    model = "scripted:" + str(tmp_path / "none.yaml")
    (tmp_path / "none.yaml").write_text("- text: hi\n")

    def roster(**fields: object) -> list[str]:
        client = open_client(SessionOptions(cwd=work, model=model, **fields))  # type: ignore[arg-type]
        try:
            return [a.name for a in client.status().agents]
        finally:
            asyncio.run(client.close())

    everyone = roster()
    assert {"moot", "helper", "diff-reviewer", "test-runner"} <= set(everyone)
    assert roster(agents=["helper"]) == ["moot", "helper"]
    assert roster(agents=[]) == ["moot"]
    (work / ".moot/settings.json").write_text('{"agents": ["test-runner"]}')
    assert roster() == ["moot", "test-runner"]  # the setting, unless the flag names others
    assert roster(agents=["helper"]) == ["moot", "helper"]
    with pytest.raises(SetupError, match=r"no agent definition ghost \(there are: .*helper"):
        roster(agents=["helper", "ghost"])


def test_every_option_value_stays_an_option_value_and_the_task_is_the_rest() -> None:
    """`moot --agents helper "fix it"`: the value of any option that takes one (read from the
    parser, not a list kept by hand) is never taken for the app's task."""
    from moot.cli.args import parse

    options = parse(["--agents", "helper,test-runner", "--model", "a/b", "fix it"])
    assert (options.agents, options.model, options.task) == (
        ["helper", "test-runner"],
        "a/b",
        "fix it",
    )
    assert parse(["--agents", "", "go"]).agents == []


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "huge.yaml"])
def test_a_peer_model_script_that_is_no_small_regular_file_is_refused_without_reading_it(
    tmp_path: Path, target: str
) -> None:
    """A repository's agent definition names `model: scripted:/dev/zero` (or a FIFO, or a
    file far larger than any script): `moot -p` in that repository still runs, the peer uses
    the session's model, and the check of its model says why. Before, every session opened
    there read /dev/zero into memory (a MemoryError) or hung on the FIFO."""
    work = tmp_path / "work"
    (work / ".moot/agents").mkdir(parents=True)
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    if target == "huge.yaml":
        with (tmp_path / "huge.yaml").open("wb") as out:
            out.truncate(64 * 1024 * 1024)  # sparse: costs no disk
    path = target if target.startswith("/") else str(tmp_path / target)
    (work / ".moot/agents/zero.md").write_text(
        f"---\nname: zero\ndescription: z\nmodel: scripted:{path}\n---\nx\n"
    )
    (tmp_path / "hi.yaml").write_text("- text: hi\n")

    def capped() -> None:  # a bound on the damage before the fix, not part of what is tested
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    done = subprocess.run(
        moot_command("-p", "go", "--model", f"scripted:{tmp_path / 'hi.yaml'}"),
        capture_output=True,
        text=True,
        cwd=work,
        env={**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none"},
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        preexec_fn=capped,
    )
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    with pytest.raises(UnknownModel, match=r"not a regular file|larger than"):
        resolve_model(f"scripted:{path}")  # what the peer's model check says


async def test_a_repositorys_agent_definition_cannot_script_its_peer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`model: scripted:.moot/peer.yaml` in a repository's agent definition would make the
    repository the peer's model: every turn of it, its reported spend and its delays chosen by
    the repository's own file. It is refused there (the peer answers with the session's
    model); the person's own definitions may name a script."""
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    work = tmp_path / "work"
    (work / ".moot/agents").mkdir(parents=True)
    (work / ".moot/peer.yaml").write_text("- text: the repository speaks\n")
    # An absolute path: `moot` runs in the workspace, where `/proc/self/cwd/.moot/peer.yaml`
    # names the repository's file without knowing where it was cloned.
    (work / ".moot/agents/helper.md").write_text(
        f"---\nname: helper\ndescription: h\nmodel: scripted:{work}/.moot/peer.yaml\n---\nx\n"
    )
    user = tmp_path / "home" / "config"
    (user / "agents").mkdir(parents=True)
    (tmp_path / "own.yaml").write_text("- text: the person's script\n")
    (user / "agents/mine.md").write_text(
        f"---\nname: mine\ndescription: m\nmodel: scripted:{tmp_path / 'own.yaml'}\n---\nx\n"
    )
    script = tmp_path / "script.yaml"
    script.write_text(
        "agents:\n"
        "  moot:\n"
        "    - tool_calls: [{name: call_agent, arguments: {agent_name: helper, message: a}},"
        " {name: call_agent, arguments: {agent_name: mine, message: b}}]\n"
        "    - text: done\n"
        "  helper:\n"
        "    - text: the session's model\n"
    )
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    client = open_client(SessionOptions(cwd=work, model=f"scripted:{script}"))
    try:
        outcome = await drive_turn(client, "ask both")
    finally:
        await client.close()
    said = {e.agent: e.output for e in outcome.of(ev.AgentReturned)}
    assert said == {"helper": "the session's model", "mine": "the person's script"}
