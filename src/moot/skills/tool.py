"""The `skill` tool: the model loads a skill's instructions when a task calls for them.

Progressive loading, as the Agent Skills format intends: every request carries only the index
(names and descriptions, in this tool's description, under a budget); the instructions arrive
as this tool's result when the model activates one; the skill's other files are read with the
file tools when the instructions point to them (the skill's folder is a read root of the
workspace, see `moot.client.assemble`).

The person starts a skill with `/name args` instead; both paths render the same text
(`activation`), so the model reads a skill the same way whoever started it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from moot.protocol.approval import SideEffect
from moot.skills.arguments import substitute
from moot.skills.grants import Grants
from moot.skills.index import SkillIndex
from moot.skills.skill import SKILL_FILE, Skill
from moot.tools.base import ToolContext, ToolResult

SKILL_TOOL = "skill"
DESCRIPTION = (
    "Load a skill: instructions for one kind of task, from moot, the person or this project. "
    "When a task matches a skill below, call this first with its name (and the `arguments` it "
    "should work on), then follow what it returns; read the files it points to with `read`.\n"
    "\nSkills:\n"
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "A skill's name, from the list"},
        "arguments": {"type": "string", "description": "What the skill should work on"},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def activation(skill: Skill, arguments: str, *, granted: bool) -> str:
    """What the model reads when `skill` is activated.

    Args:
        skill: The skill.
        arguments: What it should work on (fills `$ARGUMENTS`).
        granted: Its `allowed-tools` now run without asking.
    """
    lines = [f'<skill name="{skill.name}" source="{skill.source}">']
    if _has_files(skill):
        lines.append(f"Its files are in {skill.directory}; read them when the steps point there.")
    if skill.allowed_tools:
        listed = ", ".join(skill.allowed_tools)
        if granted:
            lines.append(f"Until this turn ends, these run without asking: {listed}.")
        else:
            lines.append(
                f"It lists allowed-tools ({listed}), but they are not pre-approved: it comes "
                "from the repository, so only the person can grant them, by approving it "
                f"(/trust) and typing /{skill.name}. Calls ask as usual."
            )
    lines += ["", substitute(skill.body, arguments).strip(), "</skill>"]
    return "\n".join(lines)


def _has_files(skill: Skill) -> bool:
    """Whether the skill's folder holds more than its `SKILL.md`."""
    try:
        return any(name != SKILL_FILE for name in os.listdir(skill.directory))
    except OSError:
        return False


def may_grant(skill: Skill, *, by_person: bool) -> bool:
    """Whether activating `skill` pre-approves its `allowed-tools`: always when the person
    starts it; when the model does, only for the person's own and moot's skills."""
    return bool(skill.allowed_tools) and (by_person or skill.source != "project")


class SkillTool:
    """The `Tool` (see the module docstring).

    Args:
        skills: The session's skills by name.
        index: The listing for the description (`moot.skills.index.skill_index`).
        grants: Where an activation's `allowed-tools` are granted.
    """

    name = SKILL_TOOL
    side_effect = SideEffect.READ_ONLY
    parameters = PARAMETERS

    def __init__(self, skills: Mapping[str, Skill], index: SkillIndex, grants: Grants) -> None:
        self.skills = skills
        self.grants = grants
        self.description = DESCRIPTION + index.text

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name, given = arguments.get("name"), arguments.get("arguments", "")
        if not isinstance(name, str) or not isinstance(given, str):
            return ToolResult.error("skill needs `name` (a string) and optional `arguments`.")
        skill = self.skills.get(name.strip().lstrip("/"))
        if skill is None or not skill.model_invocable:
            names = ", ".join(s.name for s in self.skills.values() if s.model_invocable)
            return ToolResult.error(f"No skill {name!r}. Skills: {names or 'none'}.")
        granted = may_grant(skill, by_person=False)
        if granted:
            self.grants.grant(ctx.agent, f"skill {skill.name}", skill.allowed_tools)
        text = activation(skill, given, granted=granted)
        return ToolResult(text, display={"skill": skill.name, "source": skill.source})
