"""The system prompt of a session's agents, rendered from the templates in `moot/prompts/`.

The person's agent gets `system.md` (with the environment section filled in from the
session's facts), then the skills section when the session has skills, then its memory. A peer
from an agent definition gets its own instructions, then the same environment and memory. The
runtime's core appends the roster to each (`moot.core.peers.system_prompt`); it adds nothing
else, so every word a model starts from is here or in the templates.

`PromptParts` records each part's size for `/context`.
"""

from __future__ import annotations

import msgspec

from moot.client.facts import SessionFacts
from moot.prompts import render, template


class PromptParts(msgspec.Struct, frozen=True):
    """The sizes, in bytes (UTF-8), of what the person's agent's system prompt is made of."""

    template: int
    """`system.md` with the environment filled in."""
    skills: int = 0
    """The skills section (the index itself is in the `skill` tool's description)."""
    memory: int = 0


def environment(facts: SessionFacts) -> str:
    """The environment section, filled in."""
    return render(template("environment"), msgspec.structs.asdict(facts)).strip()


def system_prompt(facts: SessionFacts, *, skills: bool, memory: str) -> tuple[str, PromptParts]:
    """The person's agent's instructions and the size of each part.

    Args:
        facts: The session's environment.
        skills: The session offers the `skill` tool.
        memory: The memory text (`moot.skills.memory.Memory.text`), empty for none.
    """
    base = render(template("system"), {"environment": environment(facts)}).strip()
    skills_text = template("skills").strip() if skills else ""
    memory_text = render(template("memory"), {"memory": memory}).strip() if memory else ""
    text = "\n\n".join(part for part in (base, skills_text, memory_text) if part)
    parts = PromptParts(_size(base), _size(skills_text), _size(memory_text))
    return text, parts


def peer_prompt(instructions: str, facts: SessionFacts, *, memory: str) -> str:
    """A defined peer's instructions, then the environment and the memory."""
    env = "# Environment\n" + environment(facts)
    memory_text = render(template("memory"), {"memory": memory}).strip() if memory else ""
    return "\n\n".join(part for part in (instructions.strip(), env, memory_text) if part)


def _size(text: str) -> int:
    return len(text.encode())
