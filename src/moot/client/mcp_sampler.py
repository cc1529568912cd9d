"""The session's model for an MCP server's request (`sampling/createMessage`, see
`moot.mcp.sampling`): asked as the session's first agent has it now, outside every run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moot.protocol.messages import AssistantMessage, Usage, UserMessage

if TYPE_CHECKING:
    from moot.core.runtime import Runtime
    from moot.mcp.sampling import Sampler


def model_sampler(runtime: Runtime) -> Sampler:
    """Asks the runtime's first agent's model what a server asks it."""

    async def ask(
        system: str, messages: list[list[str]], most: int
    ) -> tuple[str, str, Usage, float]:
        from moot.providers.base import ModelRequest, ask_text

        provider = runtime.provider()
        said = tuple(
            AssistantMessage(content=text) if role == "assistant" else UserMessage(content=text)
            for role, text in messages
        )
        request = ModelRequest(
            model=provider.name,
            system=system,
            messages=said,
            agent=runtime.entry.name,
            max_output_tokens=most,
        )
        text, usage, cost = await ask_text(provider, request)
        return text, provider.name, usage, cost

    return ask
