"""The skills index: names and descriptions the model sees in the `skill` tool's description.

Only what the model may start itself is listed (not `disable-model-invocation` skills), in
precedence order (the project's first), under `INDEX_BUDGET` characters. What does not fit is
never dropped silently: the index ends by naming how many skills it left out, and `/context`
shows the same numbers (`SkillIndex`).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from moot.skills.skill import Skill

INDEX_BUDGET = 4_000
"""Characters of skill names and descriptions sent with every request (the leading agents
spend 1% of the context window, at least 8,000; moot's five shipped skills take ~1,100)."""


class SkillIndex(msgspec.Struct, frozen=True):
    """The listing and how it fit its budget."""

    text: str
    listed: tuple[str, ...]
    """Names listed with their description."""
    left_out: tuple[str, ...] = ()
    """Names that did not fit the budget."""
    budget: int = INDEX_BUDGET


def skill_index(skills: Iterable[Skill], budget: int = INDEX_BUDGET) -> SkillIndex:
    """Lines `- name: description` for the skills the model may start, within `budget`."""
    lines: list[str] = []
    listed: list[str] = []
    left_out: list[str] = []
    used = 0
    for skill in skills:
        if not skill.model_invocable:
            continue
        line = f"- {skill.name}: {skill.description}"
        if left_out or used + len(line) + 1 > budget:
            left_out.append(skill.name)
            continue
        lines.append(line)
        listed.append(skill.name)
        used += len(line) + 1
    if left_out:
        lines.append(
            f"- ({len(left_out)} more not listed: the skills index is over its "
            f"{budget:,}-character budget; the person can see them all with /skills)"
        )
    return SkillIndex("\n".join(lines), tuple(listed), tuple(left_out), budget)
