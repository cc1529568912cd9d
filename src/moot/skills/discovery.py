"""Finding every skill of a session: the closest one of each name wins, the others are reported.

Precedence follows `moot.skills.places`: the project's folders (the working directory's first,
then each directory up to the repository's top; `.moot` before `.agents` before `.claude`),
then the user's config dir, then the skills moot ships. A skill that breaks a frontmatter rule
is left out with its problem, and a shadowed one is reported with the path that wins over it:
`/skills` and `moot skills list` show both.
"""

from __future__ import annotations

import msgspec

from moot.skills.files import folder_entries, is_dir
from moot.skills.places import Places
from moot.skills.skill import Skill, load_skill
from moot.skills.values import Problem


class Shadowed(msgspec.Struct, frozen=True):
    """A skill that another one of the same name, found closer, wins over."""

    name: str
    path: str
    by: str
    """The `SKILL.md` that wins."""


class SkillSet(msgspec.Struct, frozen=True):
    """The skills of a session and what was wrong on the way."""

    skills: dict[str, Skill]
    """By name, in precedence order (project, user, shipped)."""
    shadowed: tuple[Shadowed, ...] = ()
    problems: tuple[Problem, ...] = ()


def discover_skills(places: Places) -> SkillSet:
    """Every skill `places` hold (see the module docstring); never raises for a bad file."""
    found: dict[str, Skill] = {}
    shadowed: list[Shadowed] = []
    problems: list[Problem] = []
    for place in places.skill_folders():
        for folder in folder_entries(place.root, place.folder, problems):
            if folder.name.startswith(".") or not is_dir(folder):
                continue  # README.md beside the skills, editor files, ...
            skill, issues = load_skill(place.root, folder, place.source, denied=places.denied)
            problems += issues
            if skill is None:
                continue
            if skill.name in found:
                winner = found[skill.name].path
                shadowed.append(Shadowed(skill.name, skill.path, winner))
                problems.append(Problem(skill.path, f"shadowed by {winner}", "warning"))
            else:
                found[skill.name] = skill
    return SkillSet(found, tuple(shadowed), tuple(problems))
