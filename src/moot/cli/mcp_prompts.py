"""`moot -p "/mcp__server__prompt args"`: an MCP server's prompt as a headless run's message.

The servers are waited for first (`McpControl.mcp_ready`), so a first run on a fresh machine
finds the prompt as the app would once the server is up.
"""

from __future__ import annotations

from moot.commands.mcp import prompt_arguments
from moot.commands.registry import CommandError
from moot.protocol import ops
from moot.protocol.mcp import McpControl


async def prompt_turn(client: McpControl, line: str) -> tuple[ops.UserTurn | None, str]:
    """The turn `/mcp__server__prompt args` makes, or None and why there is none."""
    name, _, args = line.strip()[1:].partition(" ")
    await client.mcp_ready()
    servers = client.mcp_servers()
    for server in servers:
        for prompt in server.prompts:
            if prompt.command != name:
                continue
            try:
                arguments = prompt_arguments(prompt, args)
                text = await client.mcp_prompt(server.name, prompt.name, arguments)
            except (CommandError, LookupError) as exc:
                return None, f"/{name}: {exc}"
            return ops.UserTurn(text=text), ""
    offered = [f"/{p.command}" for s in servers if s.state == "ready" for p in s.prompts]
    return None, (
        f"no MCP prompt /{name}; the servers' prompts here are: {', '.join(offered) or 'none'}"
    )
