"""`/mcp` and the MCP servers' prompts as commands (`/mcp__<server>__<prompt> args`).

`/mcp` shows each server: its state, where it is defined, its tools (and what they cost each
model request), prompts and resources, and its last error; `/mcp NAME` lists one server's tools;
`/mcp approve NAME` lets a repository's server start (remembered for the workspace);
`/mcp restart NAME` restarts one (each an op: `ApproveMcpServer`, `RestartMcpServer`). A
prompt command fetches the prompt with its arguments (`key=value`, or words in the prompt's
order) and sends it as the person's message.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from moot.commands.answers import answer
from moot.commands.registry import Command, CommandContext, CommandError, Registry
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.mcp import McpControl, McpPromptInfo, McpServerStatus

BYTES_PER_TOKEN = 4
"""A rough count of tokens from bytes (what `/context` and `/mcp` show is an estimate)."""

_STATES = {
    "needs_approval": "needs your approval",
    "starting": "starting",
    "ready": "ready",
    "failed": "failed",
    "auth_required": "waiting for you to sign in",
    "stopped": "stopped",
    "disabled": "turned off",
}


def _control(context: CommandContext) -> McpControl:
    client = context.client
    if not isinstance(client, McpControl):
        raise CommandError("this session has no MCP servers")
    return client


def add_mcp_commands(registry: Registry) -> None:
    """Register `/mcp` and the source of prompt commands."""

    def complete(context: CommandContext, typed: str) -> Sequence[str]:
        client = context.client
        names = [s.name for s in client.mcp_servers()] if isinstance(client, McpControl) else []
        words = ["approve", "restart", *names]
        return [w for w in words if w.startswith(typed)]

    @registry.command(
        "mcp",
        "MCP servers: state, tools, prompts; approve or restart one",
        arguments="[NAME | approve NAME | restart NAME]",
        complete=complete,
    )
    async def mcp(context: CommandContext, args: str) -> None:
        control = _control(context)
        verb, _, name = args.partition(" ")
        name = name.strip()
        if verb in ("approve", "restart") and name:
            op: ops.Op = ops.ApproveMcpServer(name=name)
            if verb == "restart":
                op = ops.RestartMcpServer(name=name)
            done = await answer(context.client, op, ("mcp_server_approved", "mcp_server_restarted"))
            assert isinstance(done, ev.McpServerApproved | ev.McpServerRestarted)
            context.say(done.note)
            return
        servers = control.mcp_servers()
        if verb:
            chosen = [s for s in servers if s.name == verb]
            if not chosen:
                raise CommandError(f"no MCP server {verb!r}; /mcp lists them")
            context.say(describe_server(chosen[0], tools=True), markdown=True)
            return
        if not servers:
            context.say("no MCP servers (add one with `moot mcp add`)")
            return
        context.say("\n\n".join(describe_server(s) for s in servers), markdown=True)

    registry.add_source(PromptCommands())


def describe_server(server: McpServerStatus, *, tools: bool = False) -> str:
    """A server as `/mcp` shows it (markdown)."""
    lines = [
        f"**{server.name}** {_STATES.get(server.state, server.state)} · {server.transport}: "
        f"`{server.target}` ({server.origin}: {server.source})"
    ]
    if server.state == "needs_approval":
        lines.append(f"starts once you approve it: `/mcp approve {server.name}`")
    if server.auth_url:
        lines.append(f"sign in at {server.auth_url}")
    if server.tools:
        cost = sum(t.schema_bytes for t in server.tools)
        deferred = sum(t.deferred for t in server.tools)
        note = f", {deferred} loaded on demand" if deferred else ""
        lines.append(
            f"{len(server.tools)} tools (~{cost // BYTES_PER_TOKEN:,} tokens a request{note})"
        )
    if server.prompts:
        lines.append("prompts: " + ", ".join(f"/{p.command}" for p in server.prompts))
    if server.resources:
        lines.append("resources: " + ", ".join(f"@{server.name}:{r}" for r in server.resources))
    if server.error and server.state != "ready":
        lines.append(f"last error: {server.error}")
    if server.restarts:
        lines.append(f"restarted {server.restarts} times")
    if tools:
        for tool in server.tools:
            first = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
            lines.append(f"- `{tool.name}` {first}")
    return "  \n".join(lines)


class PromptCommands:
    """The MCP servers' prompts, as `/mcp__<server>__<prompt>` commands."""

    def _prompts(self, context: CommandContext) -> list[tuple[str, McpPromptInfo]]:
        client = context.client
        if not isinstance(client, McpControl):
            return []
        return [
            (server.name, prompt)
            for server in client.mcp_servers()
            if server.state == "ready"
            for prompt in server.prompts
        ]

    def find(self, context: CommandContext, name: str) -> Command | None:
        for server, prompt in self._prompts(context):
            if prompt.command == name:
                return self._command(server, prompt)
        return None

    def commands(self, context: CommandContext) -> Sequence[Command]:
        return [self._command(server, prompt) for server, prompt in self._prompts(context)]

    def _command(self, server: str, prompt: McpPromptInfo) -> Command:
        async def run(context: CommandContext, args: str) -> None:
            control = _control(context)
            arguments = prompt_arguments(prompt, args)
            try:
                text = await control.mcp_prompt(server, prompt.name, arguments)
            except LookupError as exc:
                raise CommandError(str(exc)) from None
            context.client.submit(ops.UserTurn(text=text))

        description = prompt.description or f"prompt {prompt.name} of MCP server {server}"
        return Command(prompt.command, description, run, arguments=" ".join(prompt.arguments))


def prompt_arguments(prompt: McpPromptInfo, args: str) -> dict[str, str]:
    """`key=value` words by name, other words in the prompt's argument order; the last
    argument takes what is left.

    Raises:
        CommandError: A required argument is missing, or a name is not the prompt's.
    """
    try:
        words = shlex.split(args)
    except ValueError as exc:
        raise CommandError(f"cannot read the arguments: {exc}") from None
    names = [a.rstrip("?") for a in prompt.arguments]
    values: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    for index, word in enumerate(positional):
        if index >= len(free):
            raise CommandError(f"/{prompt.command} takes {' '.join(prompt.arguments) or 'nothing'}")
        if index == len(free) - 1:
            values[free[index]] = " ".join(positional[index:])
            break
        values[free[index]] = word
    missing = [a for a in prompt.arguments if not a.endswith("?") and a not in values]
    if missing:
        raise CommandError(f"/{prompt.command} needs {' '.join(missing)}")
    return values
