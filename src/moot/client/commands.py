"""`FileCommands`: what a session's files answer for the runtime (`SessionCommands`): the
commands of `RunCommand` and the memory of `NoteToMemory`; and what the session tells front
ends about its files (`SessionStatus.instructions`).

`RunCommand` becomes a turn whose prompt is the expansion (`Guidance.expand`); what the skill
or command pre-approves (a repository's only once the person approved that file,
`file_approved`) is granted once the runtime has started the turn, for the agent it runs in,
until the turn ends. `NoteToMemory` writes the note and renders the agents' instructions again
around the new memory. The runtime checks and records both as it does every op.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec.structs import replace

from moot.client.briefing import Briefing, renewed
from moot.core.agent import Agent
from moot.core.options import CommandTurn, MemoryNote
from moot.protocol import ops
from moot.protocol.client import (
    AgentFileInfo,
    CommandInfo,
    FileProblem,
    InstructionFiles,
    MemoryInfo,
    SkillInfo,
)
from moot.settings.review import file_approved


class FileCommands:
    """The `SessionCommands` of a session that read its files (`briefing`)."""

    def __init__(self, briefing: Briefing) -> None:
        self.briefing = briefing

    def expand(self, op: ops.RunCommand) -> CommandTurn | str:
        guidance = self.briefing.guidance
        root = guidance.places.cwd
        expansion = guidance.expand(op.name, op.arguments, lambda path: file_approved(root, path))
        if expansion is None:
            names = ", ".join(f"/{entry.name}" for entry in guidance.invocable())
            return f"no command /{op.name} in this session (there are: {names})"
        return CommandTurn(
            prompt=expansion.prompt,
            model=expansion.model,
            allowed_tools=expansion.allowed_tools,
            by=expansion.by,
        )

    def grant(self, agent: str, turn: CommandTurn) -> None:
        self.briefing.grants.grant(agent, turn.by, turn.allowed_tools)

    def note(self, text: str, agents: Sequence[Agent]) -> MemoryNote | str:
        from moot.skills.memory import NoteRefused, add_note, load_memory

        guidance = self.briefing.guidance
        try:
            path = add_note(guidance.places.cwd, text)
        except NoteRefused as exc:
            return str(exc)
        memory = load_memory(guidance.places)
        self.briefing.guidance = replace(guidance, memory=memory)
        fresh = renewed(self.briefing, memory.text, agents)
        return MemoryNote(path=str(path), note=" ".join(text.split()), agents=tuple(fresh))


def instruction_files(briefing: Briefing) -> InstructionFiles:
    """What the session read from files, as front ends see it."""
    guidance = briefing.guidance
    skills = tuple(
        SkillInfo(
            s.name,
            s.description,
            s.source,
            s.path,
            s.model_invocable,
            s.user_invocable,
            s.argument_hint,
            s.allowed_tools,
        )
        for s in guidance.skills.skills.values()
    )
    commands = tuple(
        CommandInfo(e.name, e.description, e.kind, e.argument_hint, e.path)
        for e in guidance.invocable()
    )
    agents = tuple(
        AgentFileInfo(a.name, a.path, a.source, a.tools) for a in guidance.agents.values()
    )
    memory = tuple(
        MemoryInfo(f.path, f.source, f.bytes, f.imported_by) for f in guidance.memory.files
    )
    problems = tuple(
        FileProblem(p.path, p.message, p.severity) for p in (*guidance.problems, *briefing.problems)
    )
    return InstructionFiles(
        skills=skills,
        commands=commands,
        agents=agents,
        memory=memory,
        memory_notes=guidance.memory.notes,
        problems=problems,
        skills_listed=guidance.index.listed,
        skills_left_out=guidance.index.left_out,
    )
