"""Custom slash commands from real files: names, frontmatter, `$ARGUMENTS`/`$1`..`$9`, `@file`
includes, and how every front end's registry lists and runs them (with descriptions)."""

from __future__ import annotations

import os
from pathlib import Path

from msgspec.structs import replace

from command_recorder import Recorder
from moot.commands.builtin import builtin_commands
from moot.commands.files import memory_note, use_session_commands
from moot.commands.registry import CommandContext
from moot.protocol import ops
from moot.protocol.client import CommandInfo, InstructionFiles
from moot.skills.commands import discover_commands, expand_command
from moot.skills.guidance import load_guidance
from moot.skills.places import find_places
from moot.testing import FakeClient
from skill_files import git_repo

REVIEW = """---
description: Review a file for bugs
argument-hint: <path> [focus]
allowed-tools: Bash(git diff:*)
---
Review @$1 for bugs, focusing on $2. Everything: $ARGUMENTS
"""


def test_commands_are_named_by_file_and_folder_and_the_closest_wins(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    cwd = repo / "app"
    (cwd / ".moot/commands/db").mkdir(parents=True)
    (cwd / ".moot/commands/review.md").write_text(REVIEW)
    (cwd / ".moot/commands/db/migrate.md").write_text("# Run the migrations\n\nThen report.\n")
    (repo / ".moot/commands").mkdir(parents=True)
    (repo / ".moot/commands/review.md").write_text("shadowed\n")
    user = tmp_path / "config"
    (user / "commands").mkdir(parents=True)
    (user / "commands/standup.md").write_text("---\nmodel: openai/gpt-5\n---\nWrite my standup.\n")
    (cwd / ".moot/commands/bad name.md").write_text("x\n")
    (cwd / ".moot/commands/broken.md").write_text("---\ndescription: [\n---\nx\n")

    found, problems = discover_commands(find_places(cwd, user, shipped=False))

    assert sorted(found) == ["db:migrate", "review", "standup"]
    review = found["review"]
    assert (review.description, review.argument_hint, review.allowed_tools) == (
        "Review a file for bugs",
        "<path> [focus]",
        ("Bash(git diff:*)",),
    )
    assert found["db:migrate"].description == "Run the migrations"
    assert found["standup"].source == "user"
    messages = {Path(p.path).name: p.message for p in problems}
    assert messages["review.md"].startswith("shadowed by")
    assert "letters, digits" in messages["bad name.md"]
    assert "not valid YAML" in messages["broken.md"]
    assert found["standup"].model == "openai/gpt-5"
    assert "standup.md" not in messages  # its `model` is honoured (a turn model)


def test_a_command_expands_its_arguments_and_includes_workspace_files(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("SECRET\n")
    work = tmp_path / "work"
    (work / ".moot/commands").mkdir(parents=True)
    (work / ".moot/commands/review.md").write_text(
        REVIEW + "Also @big.txt, @missing.txt, @../secret.txt and @link.txt.\n"
    )
    (work / "app.py").write_text("print('hi')\n")
    (work / "big.txt").write_text("b" * 70_000)
    os.symlink(tmp_path / "secret.txt", work / "link.txt")

    guidance = load_guidance(work, None, shipped=False)
    expansion = guidance.expand("review", 'app.py "error handling"', lambda path: True)

    assert expansion is not None
    prompt = expansion.prompt
    assert prompt.startswith('/review app.py "error handling"\n\nReview @app.py for bugs, ')
    assert 'focusing on error handling. Everything: app.py "error handling"' in prompt
    assert "<file path=\"app.py\">\nprint('hi')\n</file>" in prompt
    assert "b" * 1000 in prompt and "[moot: cut here: the file is longer]" in prompt
    assert "missing.txt" not in prompt.split("Files included with @:")[1]
    assert "SECRET" not in prompt
    assert "[moot: @../secret.txt is not included: leads outside" in prompt
    assert "[moot: @link.txt is not included: leads outside" in prompt
    assert expansion.allowed_tools == ("Bash(git diff:*)",)
    assert guidance.expand("nope", "") is None
    held = guidance.expand("review", "app.py")  # the file not approved: no grant
    assert held is not None and held.allowed_tools == ()
    assert "they are not pre-approved: it comes from the repository" in held.prompt


def test_expansion_reads_nothing_from_outside_the_workspace(tmp_path: Path) -> None:
    command_dir = tmp_path / ".moot/commands"
    command_dir.mkdir(parents=True)
    (command_dir / "leak.md").write_text("Show @/etc/hostname and @~/.bashrc\n")
    guidance = load_guidance(tmp_path, None, shipped=False)
    text = expand_command(guidance.commands["leak"], "", tmp_path.resolve())
    assert "<file" not in text


# ---- the registry every front end shares -----------------------------------------------------


def client_with(*commands: CommandInfo) -> FakeClient:
    status = replace(FakeClient().status(), instructions=InstructionFiles(commands=commands))
    return FakeClient(status=status)


async def test_session_commands_complete_with_descriptions_and_submit_run_command() -> None:
    client = client_with(
        CommandInfo("review", "Review a file for bugs", "command", "<path>"),
        CommandInfo("code-review", "Review code", "skill"),
        CommandInfo("init", "Write an AGENTS.md", "moot"),
        CommandInfo("help", "A file that wants moot's own name", "command"),
    )
    registry = builtin_commands()

    warnings = use_session_commands(registry, client)

    assert warnings == ["/help from a file is hidden by moot's own /help"]
    listed = {c.name: (c.description, c.arguments) for c in registry.completions("rev")}
    assert listed == {"review": ("Review a file for bugs (command)", "<path>")}
    assert registry.get("code-review").description == "Review code (skill)"  # type: ignore[union-attr]
    context: CommandContext = Recorder(client)  # type: ignore[assignment]
    await registry.run(context, "/review src/app.py  deep")
    assert client.ops[-1] == ops.RunCommand(name="review", arguments="src/app.py  deep")

    # A new session's commands replace the old ones.
    use_session_commands(registry, client_with(CommandInfo("deploy", "Ship it", "command")))
    assert registry.get("review") is None and registry.get("deploy") is not None
    assert registry.get("help") is not None and registry.get("skills") is not None


def test_what_moot_ships_never_clashes_with_its_own_commands(tmp_path: Path) -> None:
    """Every `/name` the shipped skills add is reachable by its name: none is hidden by a
    built-in command, so a session in a plain directory starts without a warning (the shipped
    `commit` skill was hidden by `/commit` and warned at every start)."""
    guidance = load_guidance(tmp_path, None, shipped=True)
    commands = tuple(
        CommandInfo(e.name, e.description, e.kind, e.argument_hint, e.path)
        for e in guidance.invocable()
    )
    registry = builtin_commands()

    assert use_session_commands(registry, client_with(*commands)) == []
    assert all(registry.from_session(c.name) for c in commands)
    assert {c.name for c in commands if c.kind == "skill"} >= {"code-review", "commit-staged"}


def test_a_prompt_starting_with_a_hash_is_a_memory_note() -> None:
    assert memory_note("# use tabs, never spaces") == "use tabs, never spaces"
    assert memory_note("#remember this") == "remember this"
    assert memory_note("  ## heading note ") == "heading note"
    assert memory_note("#!/bin/sh\necho hi") is None
    assert memory_note("## A heading\nand a paragraph pasted") is None
    assert memory_note("what does # mean here?") is None
    assert memory_note("#") is None
