"""Slash commands about what the session learned from files, and the commands those files add.

`add_file_commands(registry)` adds `/skills`, `/memory` and `/agents` to a front end's registry
(`moot.commands.builtin.builtin_commands` does it). `use_session_commands(registry, client)`
registers the session's own `/name`s (its skills, custom commands and `/init`) after it opens
and again after `/new`: each submits `RunCommand`, and the session expands it.

A prompt that starts with `#` is a note for the project's memory (`memory_note`), sent as
`NoteToMemory`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.protocol import ops
from moot.protocol.client import Client, CommandInfo, InstructionFiles


def memory_note(text: str) -> str | None:
    """The note a prompt holds when it starts with `#` (a memory note), else None.

    `#!` (a pasted script) and `##` headings followed by more lines are not notes."""
    stripped = text.strip()
    if not stripped.startswith("#") or stripped.startswith(("#!", "#{")):
        return None
    if stripped.startswith("##") and "\n" in stripped:
        return None
    note = stripped.lstrip("#").strip()
    return note or None


def add_file_commands(registry: Registry) -> None:
    """Add `/skills`, `/memory` and `/agents` to `registry`."""

    @registry.command("skills", "The skills: where each comes from, and problems in any")
    async def skills(context: CommandContext, args: str) -> None:
        context.say(describe_skills(context.client.status().instructions), markdown=True)

    @registry.command(
        "memory", "The memory files loaded; /memory edit opens one", arguments="[edit]"
    )
    async def memory(context: CommandContext, args: str) -> None:
        status = context.client.status()
        files = status.instructions
        if args.strip() != "edit":
            context.say(describe_memory(files), markdown=True)
            return
        choices = [(path, path) for path in _editable(files, status.workspace)]
        chosen = await context.pick("edit which memory file?", choices)
        if chosen is None:
            return
        edit = getattr(context, "edit_file", None)  # an ability only some front ends have
        if edit is None:
            context.say(f"open {chosen} in your editor; the next session reads it")
            return
        edit(chosen)
        context.say(f"saved {chosen}: the next session reads it (/new starts one)")

    @registry.command("agents", "The agents of this session and the files that define them")
    async def agents(context: CommandContext, args: str) -> None:
        status = context.client.status()
        context.say(describe_agents(status.agents, status.instructions), markdown=True)


def session_commands(client: Client) -> list[Command]:
    """The `/name`s the session's files add, each submitting `RunCommand`."""
    return [_session_command(info) for info in client.status().instructions.commands]


def use_session_commands(registry: Registry, client: Client) -> list[str]:
    """Register the session's own commands in `registry` (replacing another session's).

    Returns:
        What the person should be told: names a built-in command already has.
    """
    skipped = registry.replace_session(session_commands(client))
    return [f"/{name} from a file is hidden by moot's own /{name}" for name in skipped]


def _session_command(info: CommandInfo) -> Command:
    name = info.name

    async def run(context: CommandContext, args: str) -> None:
        if context.client.status().running:
            raise CommandError("a turn is running: wait for it, or press Esc to interrupt it")
        context.client.submit(ops.RunCommand(name=name, arguments=args))

    label = {"skill": "skill", "command": "command", "moot": ""}.get(info.kind, "")
    description = f"{info.description} ({label})" if label else info.description
    return Command(name, description, run, arguments=info.argument_hint)


def describe_skills(files: InstructionFiles) -> str:
    lines = ["**Skills**", ""]
    if not files.skills:
        lines.append("none (see README: Skills)")
    for skill in files.skills:
        who = [] if skill.model_invocable else ["only by /name"]
        who += [] if skill.user_invocable else ["only the model"]
        extra = f" ({', '.join(who)})" if who else ""
        lines.append(f"- `{skill.name}` [{skill.source}]{extra}: {skill.description}")
        lines.append(f"  {skill.path}")
    if files.skills_left_out:
        lines += [
            "",
            f"Not in the model's index (over its budget): {', '.join(files.skills_left_out)}",
        ]
    lines += _problems(files, "skills", "commands")
    return "\n".join(lines)


def describe_memory(files: InstructionFiles) -> str:
    lines = ["**Memory**", ""]
    if not files.memory:
        lines.append("no AGENTS.md or CLAUDE.md here; `# note` starts one, /init writes one")
    for item in files.memory:
        by = f", imported by {item.imported_by}" if item.imported_by else ""
        lines.append(f"- {item.path} [{item.source}], {item.bytes:,} bytes{by}")
    lines += [f"- {note}" for note in files.memory_notes]
    return "\n".join(lines)


def describe_agents(agents: Sequence[object], files: InstructionFiles) -> str:
    defined = {a.name: a for a in files.agents}
    lines = ["**Agents**", ""]
    for agent in agents:
        name, role, model = agent.name, agent.role, agent.model  # type: ignore[attr-defined]
        lines.append(f"- `{name}` ({model}): {role}")
        if name in defined:
            item = defined[name]
            tools = ", ".join(item.tools) if item.tools is not None else "every tool"
            lines.append(f"  [{item.source}] {item.path}; tools: {tools}")
    lines += _problems(files, "agents")
    return "\n".join(lines)


def _problems(files: InstructionFiles, *kinds: str) -> list[str]:
    """The problems in files under a `<kind>/` folder (`skills`, `commands`, `agents`)."""
    found = [p for p in files.problems if any(f"{os.sep}{k}{os.sep}" in p.path for k in kinds)]
    if not found:
        return []
    return ["", "**Problems**", ""] + [f"- {p.severity}: {p.path}: {p.message}" for p in found]


def _editable(files: InstructionFiles, workspace: str) -> list[str]:
    """The memory files loaded, and the workspace's own `AGENTS.md` (made when missing)."""
    paths = [item.path for item in files.memory]
    own = os.path.join(workspace, "AGENTS.md")
    return paths if own in paths or any(p.endswith("CLAUDE.md") for p in paths) else [*paths, own]
