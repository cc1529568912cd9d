"""What a session's files add to it as it opens: the prompts, the `skill` tool, the peers from
agent definitions, and the policy that narrows those peers and widens active skills.

`brief` takes what `moot.skills.guidance.load_guidance` read and the session's facts, and
returns a `Briefing` that `moot.client.assemble.open_session` builds the runtime from.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from moot.client.facts import SessionFacts
from moot.client.prompt import PromptParts, peer_prompt, system_prompt
from moot.core.agent import Agent
from moot.core.peers import (
    FINISH_SPEC,
    GET_MESSAGES_SPEC,
    SEND_MESSAGE_SPEC,
    call_agent_spec,
    offers_messages,
    spawn_spec,
)
from moot.core.peers import system_prompt as with_roster
from moot.protocol.client import PromptPart
from moot.skills.agents import AgentDefinition
from moot.skills.grants import Grants
from moot.skills.guidance import Guidance
from moot.skills.policy import ToolLimit
from moot.skills.tool import SKILL_TOOL, SkillTool
from moot.skills.values import Problem
from moot.tools.base import Tool, tool_spec

if TYPE_CHECKING:
    from moot.providers.base import Provider

CheckModel = Callable[[str], str | None]
"""What is wrong with a model name (None: it resolves)."""


class Briefing(msgspec.Struct):
    """The session's agents and tools as its files shape them."""

    guidance: Guidance
    facts: SessionFacts
    agents: list[Agent]
    """The person's agent first, then the defined peers."""
    tools: list[Tool]
    """Tools the files add (the `skill` tool when any skill is there for the model)."""
    limits: dict[str, ToolLimit]
    grants: Grants
    parts: PromptParts
    problems: list[Problem]
    """What was wrong beyond the files themselves (a peer's unknown model)."""


def brief(
    guidance: Guidance,
    agent: Agent,
    facts: SessionFacts,
    shared_tools: Sequence[Tool],
    *,
    check_model: CheckModel,
    hidden: Callable[[str], bool] = lambda name: False,
) -> Briefing:
    """Shape the session (see the module docstring).

    Args:
        guidance: What the session's files hold.
        agent: The person's agent; its instructions are replaced by the rendered prompt.
        facts: The session's environment.
        shared_tools: The session's tools before the files add any.
        check_model: Says what is wrong with a peer's model name.
        hidden: Whether a bare deny rule takes a tool away (`skill`, say).
    """
    grants = Grants()
    tools: list[Tool] = []
    index = guidance.index
    if (index.listed or index.left_out) and not hidden(SKILL_TOOL):
        tools.append(SkillTool(guidance.skills.skills, index, grants))
    memory = guidance.memory.text
    text, parts = system_prompt(facts, skills=bool(tools), memory=memory)
    agents = [replace(agent, instructions=text)]
    limits: dict[str, ToolLimit] = {}
    problems: list[Problem] = []
    names = [t.name for t in (*shared_tools, *tools)]
    for definition in guidance.agents.values():
        model = _peer_model(definition, agent.model, check_model, problems)
        given: tuple[str, ...] | None = None
        if definition.tools is not None:
            limit = ToolLimit(definition.name, definition.tools)
            limits[definition.name] = limit
            given = tuple(name for name in (*names, "call_agent") if limit.offers(name))
        try:
            peer = Agent(
                definition.name,
                role=definition.description,
                instructions=peer_prompt(definition.instructions, facts, memory=memory),
                model=model,
                given_tools=given,
            )
        except ValueError as exc:
            problems.append(Problem(definition.path, str(exc)))
            continue
        agents.append(peer)
    return Briefing(guidance, facts, agents, tools, limits, grants, parts, problems)


def _peer_model(
    definition: AgentDefinition,
    session_model: str | Provider,
    check_model: CheckModel,
    problems: list[Problem],
) -> str | Provider:
    """The model a defined peer answers with: its own, unless it cannot be used (a problem
    says why, and the session's model answers)."""
    named = definition.model
    if not named:
        return session_model
    scripted = any(part.strip().startswith("scripted:") for part in named.split(","))
    if definition.source == "project" and scripted:
        # A script there would be the repository's own file speaking as the peer: every
        # turn, its reported spend, its delays. A repository names real models only.
        wrong: str | None = "a repository's agent definition cannot name a scripted model"
    else:
        wrong = check_model(named)
    if wrong:
        problems.append(
            Problem(definition.path, f"{wrong}; it uses the session's model", "warning")
        )
        return session_model
    return named


def renewed(briefing: Briefing, memory: str, agents: Sequence[Agent]) -> list[Agent]:
    """`agents` with their instructions rendered again around a new memory text."""
    facts, guidance = briefing.facts, briefing.guidance
    fresh: list[Agent] = []
    for agent in agents:
        definition = guidance.agents.get(agent.name)
        if definition is not None:
            text = peer_prompt(definition.instructions, facts, memory=memory)
        else:
            text, _ = system_prompt(facts, skills=bool(briefing.tools), memory=memory)
        fresh.append(replace(agent, instructions=text))
    return fresh


def context_parts(
    briefing: Briefing, agents: Sequence[Agent], tools: Sequence[Tool], *, background: bool = False
) -> tuple[PromptPart, ...]:
    """What every request of the person's agent carries, part by part, for `/context`
    (`background`: the session allows background agents)."""
    guidance, parts = briefing.guidance, briefing.parts
    entry = agents[0]
    talks = offers_messages(len(agents), background=background, messages=False)
    roster_text = with_roster(entry, agents, "user", talks=talks)
    roster = len(roster_text.encode()) - len(entry.instructions.encode())
    index = guidance.index
    index_detail = (
        f"{len(index.listed)} listed, {len(index.left_out)} left out; "
        f"{len(index.text):,} of {index.budget:,} characters"
    )
    memory = guidance.memory
    memory_detail = f"{len(memory.files)} files" + ("; cut at its cap" if memory.cut else "")
    specs = [tool_spec(t) for t in tools]
    specs.append(msgspec.to_builtins(call_agent_spec(agents, background=background)))
    if background:
        specs.append(msgspec.to_builtins(spawn_spec(agents)))
    if talks:
        specs += [msgspec.to_builtins(s) for s in (SEND_MESSAGE_SPEC, GET_MESSAGES_SPEC)]
    specs.append(msgspec.to_builtins(FINISH_SPEC))
    return (
        PromptPart("system prompt", parts.template, "prompts/system.md with the environment"),
        PromptPart("skills section", parts.skills),
        PromptPart("memory", parts.memory, memory_detail),
        PromptPart("roster", roster, f"{len(agents)} agents and the person"),
        PromptPart("skills index", len(index.text.encode()), index_detail),
        PromptPart("tool schemas", len(json.dumps(specs).encode()), f"{len(specs)} tools"),
    )


def skill_read_roots(guidance: Guidance, workspace: Path) -> tuple[Path, ...]:
    """The folders of skills outside the workspace, which the file tools may then read."""
    found: list[Path] = []
    for skill in guidance.skills.skills.values():
        folder = Path(skill.directory)
        if not folder.is_relative_to(workspace) and folder not in found:
            found.append(folder)
    return tuple(found)
