"""MCP servers as front ends see them: a server's definition, its state, and what may be asked.

A session connects to the MCP servers its settings and `.mcp.json` name (and any a front end
brings, such as an editor over ACP). Front ends never talk to a server: they read each server's
`McpServerStatus` and a server's prompts and resources through `McpControl`, which a client
implements when its sessions may have MCP servers (`isinstance(client, McpControl)`); they
change them by ops (`ApproveMcpServer`, `RestartMcpServer`), as they change anything else.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import msgspec

Transport = Literal["stdio", "http", "sse"]
"""How moot reaches a server: a subprocess over stdin/stdout, streamable HTTP, or legacy SSE."""

Origin = Literal["user", "project", "local", "client", "flag"]
"""Where a definition came from: the user's settings; the repository (`.mcp.json`,
`.moot/settings.json`); the personal but in-repository `.moot/settings.local.json`; the front end
(an editor over ACP); the command line. Only `user`, `client` and `flag` start without the
person's approval: the others are files a repository can bring."""

ServerState = Literal[
    "needs_approval", "starting", "ready", "failed", "auth_required", "stopped", "disabled"
]
"""`needs_approval`: a repository's server waits for the person (never started); `starting`:
connecting; `ready`: tools listed; `failed`: it did not start, crashed or stopped answering (the
next use restarts it, after a back-off); `auth_required`: a remote server waits for the person
to sign in (`auth_url`); `stopped`: the session is closing; `disabled`: a deny rule or a setting
turned it off."""

TRUSTED_ORIGINS: frozenset[str] = frozenset({"user", "client", "flag"})
"""Origins whose servers start without the person's approval."""


class McpServerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One server's definition, after `${VAR}` expansion."""

    name: str
    """As the tools' names carry it: `mcp__<name>__<tool>`."""
    transport: Transport
    command: str = ""
    """stdio: the program to run."""
    args: tuple[str, ...] = ()
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """stdio: variables on top of a minimal environment (`PATH`, `HOME`, ...)."""
    cwd: str | None = None
    """stdio: where the program runs; when None, the workspace, but the home directory for a
    server of the user's settings (`moot.mcp.connection`)."""
    url: str = ""
    """http and sse: the endpoint."""
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    timeout_s: float = 120.0
    """How long one tool call, prompt or resource read may take."""
    startup_timeout_s: float = 30.0
    """How long connecting and listing may take."""
    origin: Origin = "user"
    source: str = ""
    """The file that defined it (or `ACP client`, `--mcp-config`)."""
    fingerprint: str = ""
    """A digest of the definition as written (before expansion): an approval is for this."""
    problem: str = ""
    """Why it cannot start as defined (an unset `${VAR}`), or empty."""

    @property
    def trusted(self) -> bool:
        """Whether it starts without the person's approval."""
        return self.origin in TRUSTED_ORIGINS

    def shown(self) -> str:
        """The command line or URL, as the person should see it before approving."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return f"{self.url} ({self.transport})"


class McpPromptInfo(msgspec.Struct, frozen=True):
    """A prompt a server offers; the person runs it as `/mcp__<server>__<name> args`."""

    name: str
    command: str
    """The slash command that runs it, without the slash: `mcp__<server>__<name>`."""
    description: str = ""
    arguments: tuple[str, ...] = ()
    """Argument names, in order; those not `required` end with `?`."""


class McpToolInfo(msgspec.Struct, frozen=True):
    """One of a server's tools, as `/mcp` and `/context` show it."""

    name: str
    """As the model calls it: `mcp__<server>__<tool>`."""
    description: str = ""
    schema_bytes: int = 0
    """The size of what each model request carries for it (name, description, schema)."""
    deferred: bool = False
    """Only its name and one line go out; the model loads the schema with `mcp_tool_search`."""


class McpServerStatus(msgspec.Struct, frozen=True, kw_only=True):
    """One server of the session, now."""

    name: str
    transport: Transport
    origin: Origin
    source: str
    target: str
    """The command line or URL."""
    state: ServerState
    tools: tuple[McpToolInfo, ...] = ()
    prompts: tuple[McpPromptInfo, ...] = ()
    resources: tuple[str, ...] = ()
    """Resource URIs, as `@<server>:<uri>` mentions name them."""
    error: str = ""
    """The last error (why it failed, crashed or timed out)."""
    auth_url: str = ""
    """With `auth_required`: where the person signs in."""
    restarts: int = 0


class McpResourceText(msgspec.Struct, frozen=True):
    """What reading a resource gave: its text, or its binary parts as base64."""

    uri: str
    text: str = ""
    mime_type: str = ""
    blobs: tuple[tuple[str, str], ...] = ()
    """(mime type, base64 data) of each binary part."""


@runtime_checkable
class McpControl(Protocol):
    """What a front end may read of a session's MCP servers (the ops change them)."""

    def mcp_servers(self) -> list[McpServerStatus]:
        """Every server of the session and its state, in name order."""
        ...

    async def mcp_prompt(self, server: str, prompt: str, arguments: dict[str, str]) -> str:
        """A server's prompt with `arguments`, as the text of a message to send.

        Raises:
            LookupError: No such server or prompt, or the server failed; the message says why.
        """
        ...

    async def mcp_ready(self) -> None:
        """Wait for the servers of a session that waits for them before its first request
        (`moot -p`, an editor: bounded, once, telling what was late); at once otherwise."""
        ...

    async def mcp_resource(self, server: str, uri: str) -> McpResourceText:
        """Read one of a server's resources (waits for the server to start).

        Raises:
            LookupError: No such server, or the read failed; the message says why.
        """
        ...
