"""Everything a session learns from files, loaded once as it opens: skills, custom commands,
agent definitions and memory, with every problem found on the way.

`Guidance.expand` turns `/name args` into the prompt of a turn, for a skill the person may
start, a custom command, or moot's own `/init`; the session layer (`moot.client.local`) calls
it for the `RunCommand` op.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

import msgspec

from moot.skills.agents import AgentDefinition, discover_agents
from moot.skills.commands import CustomCommand, discover_commands, expand_command
from moot.skills.discovery import SkillSet, discover_skills
from moot.skills.files import Denied
from moot.skills.index import SkillIndex, skill_index
from moot.skills.memory import Memory, load_memory
from moot.skills.places import Places, find_places
from moot.skills.tool import activation, may_grant
from moot.skills.values import Problem

INIT = "init"
"""moot's own prompt command: write an `AGENTS.md` for the repository."""


class Invocable(msgspec.Struct, frozen=True):
    """A `/name` the person may type: a skill, a custom command, or moot's own."""

    name: str
    description: str
    kind: str
    """`skill`, `command` or `moot`."""
    argument_hint: str = ""
    path: str = ""


class Expansion(msgspec.Struct, frozen=True):
    """What `/name args` becomes: the turn's prompt and what it pre-approves."""

    prompt: str
    allowed_tools: tuple[str, ...] = ()
    by: str = ""
    """What grants them, for the person (`skill code-review`, `command /review`)."""
    model: str = ""
    """The model the turn answers with (a command's `model`); empty: the session's."""


class Guidance(msgspec.Struct, frozen=True):
    """The session's skills, commands, agents and memory (see the module docstring)."""

    places: Places
    skills: SkillSet
    commands: dict[str, CustomCommand]
    agents: dict[str, AgentDefinition]
    memory: Memory
    index: SkillIndex
    problems: tuple[Problem, ...] = ()

    def invocable(self) -> list[Invocable]:
        """Every `/name` from files, by name; a skill wins over a command of the same name."""
        found: dict[str, Invocable] = {
            INIT: Invocable(INIT, "Write an AGENTS.md for this repository", "moot")
        }
        for skill in self.skills.skills.values():
            if skill.user_invocable and skill.name not in found:
                found[skill.name] = Invocable(
                    skill.name, skill.description, "skill", skill.argument_hint, skill.path
                )
        for command in self.commands.values():
            if command.name not in found:
                found[command.name] = Invocable(
                    command.name,
                    command.description,
                    "command",
                    command.argument_hint,
                    command.path,
                )
        return sorted(found.values(), key=lambda entry: entry.name)

    def expand(
        self, name: str, arguments: str, approved: Callable[[Path], bool] | None = None
    ) -> Expansion | None:
        """The turn `/name arguments` makes, or None when there is no such command.

        Custom commands include their `@path` files from the workspace (the working
        directory); nothing outside it is read. A repository's skill or command pre-approves
        its `allowed-tools` only once the person approved that file's content (`approved`,
        `/trust`); until then its turn asks as any other.
        """
        line = f"/{name} {arguments.strip()}".strip()  # what the person typed comes first
        if name == INIT:
            from moot.prompts import render, template

            text = render(template("init"), {"arguments": arguments.strip() or "nothing"})
            return Expansion(f"{line}\n\n{text.strip()}")
        skill = self.skills.skills.get(name)
        if skill is not None and skill.user_invocable:
            granted = may_grant(skill, by_person=True) and _ours(skill.source, skill.path, approved)
            text = activation(skill, arguments, granted=granted)
            tools = skill.allowed_tools if granted else ()
            return Expansion(f"{line}\n\n{text}", tools, f"skill {name}")
        command = self.commands.get(name)
        if command is not None:
            text = expand_command(command, arguments, self.places.cwd, denied=self.places.denied)
            tools = command.allowed_tools
            if tools and not _ours(command.source, command.path, approved):
                listed = ", ".join(tools)
                text += (
                    f"\n\n(This command lists allowed-tools ({listed}), but they are not "
                    "pre-approved: it comes from the repository and the person has not approved "
                    "it (/trust). Calls ask as usual.)"
                )
                tools = ()
            return Expansion(f"{line}\n\n{text}", tools, f"command /{name}", command.model)
        return None

    def repository_grants(self) -> list[tuple[str, Path, tuple[str, ...]]]:
        """The repository's skills and commands that list `allowed-tools`: (`/name`, its file,
        the tools), which `/trust` shows until the person approves each file."""
        found: list[tuple[str, Path, tuple[str, ...]]] = []
        for skill in self.skills.skills.values():
            if skill.source == "project" and skill.allowed_tools and skill.user_invocable:
                found.append((f"/{skill.name}", Path(skill.path), skill.allowed_tools))
        for command in self.commands.values():
            if command.source == "project" and command.allowed_tools:
                found.append((f"/{command.name}", Path(command.path), command.allowed_tools))
        return found


def _ours(source: str, path: str, approved: Callable[[Path], bool] | None) -> bool:
    """Whether a file's grants hold: the person's and moot's always; a repository's once its
    content is approved (never, when the caller cannot tell)."""
    return source != "project" or (approved is not None and approved(Path(path)))


def load_guidance(
    cwd: Path,
    config_dir: Path | None,
    *,
    shipped: bool = True,
    agent_names: Collection[str] = (),
    denied: Denied | None = None,
) -> Guidance:
    """Read everything a session started in `cwd` learns from files; never raises for a bad
    file (its problem is kept instead).

    Args:
        cwd: The working directory (the workspace root).
        config_dir: The user's config dir; None leaves the user's files out.
        shipped: Include the skills and agents moot ships.
        agent_names: Names the session's agents already have (refused for definitions).
        denied: The person's `Read(...)` deny rules: nothing they cover is read.
    """
    places = find_places(cwd, config_dir, shipped=shipped, denied=denied)
    skills = discover_skills(places)
    commands, command_problems = discover_commands(places)
    agents, agent_problems = discover_agents(places, taken=agent_names)
    memory = load_memory(places)
    problems = (*skills.problems, *command_problems, *agent_problems)
    index = skill_index(skills.skills.values())
    return Guidance(places, skills, commands, agents, memory, index, problems)
