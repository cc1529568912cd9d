"""The ops a session with files answers itself: `RunCommand` and `NoteToMemory`; and what it
tells front ends about its files (`SessionStatus.instructions`).

`RunCommand` becomes a `UserTurn` whose prompt is the expansion (`Guidance.expand`); what the
skill or command pre-approves is granted once the turn has started, for the agent it runs in,
until the turn ends. `NoteToMemory` writes the note, records `memory_noted`, and renders the
agents' instructions again around the new memory.
"""

from __future__ import annotations

from msgspec.structs import replace

from moot.client.briefing import Briefing, renewed
from moot.core.runtime import Runtime
from moot.protocol import events as ev
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


def run_command(runtime: Runtime, briefing: Briefing, op: ops.RunCommand) -> str:
    """Start the turn `/name arguments` makes; its submission id. One the session cannot take
    now (a turn runs, its model cannot be used) is answered by `op_refused`, as a turn is."""
    guidance = briefing.guidance
    root = guidance.places.cwd
    expansion = guidance.expand(op.name, op.arguments, lambda path: file_approved(root, path))
    if expansion is None:
        names = ", ".join(f"/{entry.name}" for entry in briefing.guidance.invocable())
        return _refuse(runtime, op, f"no command /{op.name} in this session (there are: {names})")
    turn = ops.UserTurn(text=expansion.prompt, agent=op.agent, model=expansion.model or None)
    if why := runtime.turn_refusal(turn):
        # Refused here, before anything is granted: a grant waits for a turn that would not come.
        if expansion.model and why == runtime.unusable_model(expansion.model):
            why = f"/{op.name} names model {expansion.model!r}: {why}"
        return _refuse(runtime, op, why)
    submission = runtime.submit(turn)
    if expansion.allowed_tools:
        agent = op.agent or runtime.entry.name
        briefing.grants.grant(agent, expansion.by, expansion.allowed_tools)
    return submission


def note_to_memory(runtime: Runtime, briefing: Briefing, op: ops.NoteToMemory) -> str:
    """Add the note to the workspace's memory file; the submission id of `memory_noted`."""
    from moot.skills.memory import NoteRefused, add_note, load_memory

    guidance = briefing.guidance
    try:
        path = add_note(guidance.places.cwd, op.text)
    except NoteRefused as exc:
        return _refuse(runtime, op, str(exc))
    submission = runtime.new_submission()
    runtime.record_session(
        ev.MemoryNoted(path=str(path), note=" ".join(op.text.split()), submission_id=submission)
    )
    memory = load_memory(guidance.places)
    briefing.guidance = replace(guidance, memory=memory)
    for agent in renewed(briefing, memory.text, list(runtime.agents.values())):
        runtime.update_agent(agent)
    return submission


def _refuse(runtime: Runtime, op: ops.Op, reason: str) -> str:
    submission = runtime.new_submission()
    runtime.record_session(ev.OpRefused(op=op.kind, reason=reason, submission_id=submission))
    return submission


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
