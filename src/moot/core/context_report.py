"""What an agent's model would read with its next request, part by part (`/context`).

Each part is estimated as the pre-flight check estimates a request (`estimate_tokens`), and the
tools are the ones a request offers (`core.peers.offered_specs`), so `/context` and a request
count the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moot.core.agent import Agent
from moot.core.peers import PERSON, agent_tools, offered_specs, offers_messages, system_prompt
from moot.core.run import RunSettings
from moot.protocol.client import ContextPart
from moot.protocol.messages import Message, ToolResultMessage
from moot.providers.base import ModelRequest, estimate_tokens
from moot.tools.base import Tool


def context_parts(
    chosen: Agent,
    roster: Sequence[Agent],
    tools: Mapping[str, Tool],
    messages: Sequence[Message],
    settings: RunSettings,
) -> list[ContextPart]:
    """The system prompt, the tool schemas and the messages `chosen`'s model would read.

    Args:
        chosen: The agent asked about.
        roster: The session's agents.
        tools: The tools every agent of the session has.
        messages: The agent's conversation with the person.
        settings: The session's run settings (which peer tools are offered).
    """
    background = settings.allow_background_agents
    talks = offers_messages(len(roster), background=background, messages=settings.peer_messages)
    specs = offered_specs(
        chosen,
        agent_tools(chosen, tools),
        roster,
        background=background,
        talks=talks,
        disabled=settings.disabled_tools,
    )

    def tokens(**request: Any) -> int:
        return estimate_tokens(ModelRequest(model="", **{"system": "", "messages": (), **request}))

    results = sum(isinstance(m, ToolResultMessage) for m in messages)
    attached = [a for m in messages for a in getattr(m, "attachments", ())]
    attached_tokens = 0
    if attached:
        from moot.providers.images import attachment_tokens  # only with an image or a PDF

        attached_tokens = sum(map(attachment_tokens, attached))
    parts = [
        ContextPart(
            "system prompt",
            tokens(system=system_prompt(chosen, roster, PERSON, talks=talks)),
            "instructions and the peers",
        ),
        ContextPart("tools", tokens(tools=specs), f"{len(specs)} tool schemas"),
        ContextPart(
            "messages",
            tokens(messages=messages) - attached_tokens,
            f"{len(messages)} messages, {results} tool results",
        ),
    ]
    if attached:
        documents = sum(a.is_document for a in attached)
        detail = f"{len(attached) - documents} images, {documents} documents"
        parts.append(ContextPart("images and documents", attached_tokens, detail))
    return parts
