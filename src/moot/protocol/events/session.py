"""Session events: they belong to no run (no `run_id` or `call_id`) and may be stored at any
time (`SESSION_KINDS`)."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from moot.protocol.events.base import EventBase
from moot.protocol.messages import Usage
from moot.protocol.modes import ModeName


class ModeChanged(EventBase, tag="mode_changed", frozen=True):
    """The session's permission mode changed (a `SetMode` op, or an approved plan).

    A session event: `run_id` and `call_id` are empty, because a mode outlives runs and may
    change between them.
    """

    mode: ModeName
    previous: ModeName
    by: Literal["user", "plan_approval"] = "user"
    """"plan_approval": the person approved a plan (`exit_plan_mode`), which leaves plan mode."""


class SessionRenamed(EventBase, tag="session_renamed", frozen=True):
    """The session's title changed (`/rename`, or its model named it after the first turn: the
    `modelTitles` setting); a session event. Session lists show the last one; until the first,
    a session is titled by its first prompt's first line."""

    title: str
    previous: str = ""
    by: Literal["user", "model"] = "user"
    """"model": the session's model wrote the title, in a request of its own outside every run
    (no fold takes it); `model`, `usage` and `cost_usd` say what it cost, for the ledger."""
    model: str = ""
    """The model that wrote the title (empty: none was asked)."""
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float = 0.0


class SessionResumed(EventBase, tag="session_resumed", frozen=True):
    """A stored session was opened again (`moot -c`, `moot -r`, `/resume`): where a sitting
    begins. A session event, recorded before anything else of the sitting (the switches its
    flags make, `mode_changed` and `model_changed`, follow it); no fold takes it."""

    model: str
    """The model the person's agent answers with in this sitting."""
    mode: ModeName | None = None
    """The permission mode the sitting works in (None: the session has no modes)."""
    agents: tuple[str, ...] = ()
    """The session's agents, the person's agent first (as `turn_started.pool`)."""


class SessionForked(EventBase, tag="session_forked", frozen=True):
    """The events before this one were copied from session `source` (its events up to `at`):
    a fork (`moot sessions fork`, `/fork`, `/rewind`) begins here. A session event; no fold
    takes it. What the copied events record was spent in `source`, so the cost ledger counts
    a session's usage from its last `session_forked` on."""

    source: str
    at: int


class ModelChanged(EventBase, tag="model_changed", frozen=True):
    """An agent's model changed (a `SetModel` op); its next turn asks the new one.

    A session event (no run); `agent` names the agent whose model it is.
    """

    model: str
    previous: str


class ToolRan(EventBase, tag="tool_ran", frozen=True):
    """A tool the person ran directly (`RunTool`) finished: its result, which no model sees.

    A session event (no run): nothing folds it into a conversation.
    """

    tool: str
    content: str
    arguments: dict[str, Any] = msgspec.field(default_factory=dict)
    is_error: bool = False
    duration_ms: float = 0.0
    interrupted: bool = False
    """An `Interrupt` (or the session's end) stopped it before it finished."""
    display: dict[str, Any] = msgspec.field(default_factory=dict)
    """Structured data for front ends, as in `tool_finished`."""


class OpRefused(EventBase, tag="op_refused", frozen=True):
    """An op could not be carried out: it matched nothing (an `Approve` for a call that waits
    on no approval), or the session was in no state for it. A session event."""

    op: str
    """The op's kind (`approve`, `deny`, ...)."""
    reason: str


class MemoryNoted(EventBase, tag="memory_noted", frozen=True):
    """The person added a note to the project's memory (`NoteToMemory`). A session event."""

    path: str
    """The memory file written."""
    note: str


class RunToolsInterrupted(EventBase, tag="run_tools_interrupted", frozen=True):
    """An `Interrupt` stopped tool calls the person runs (`RunTool`): its answer, since each of
    those calls still ends with its own `tool_ran` (interrupted), which answers the `RunTool`.
    A session event."""

    tools: tuple[str, ...]
    """The tools stopped, in the order they were started."""
    submissions: tuple[str, ...]
    """The submission ids of the `RunTool`s stopped, in the same order."""


class FilesRestored(EventBase, tag="files_restored", frozen=True):
    """The files the session's tools changed were put back as they were before run
    `before_run` (`RestoreFiles`, `/rewind`). A session event (it names the run in a field of
    its own): the conversation is untouched."""

    before_run: str
    """The run undone, with every later one."""
    restored: tuple[str, ...] = ()
    """Workspace-relative paths written back or removed, sorted."""
    failures: tuple[str, ...] = ()
    """`path: reason` for each file that could not be put back."""


class McpServerApproved(EventBase, tag="mcp_server_approved", frozen=True):
    """The person approved a repository's MCP server (`ApproveMcpServer`); it starts. A
    session event."""

    server: str
    note: str
    """What was done, for the person (the command line approved, whether it is remembered)."""


class McpServerRestarted(EventBase, tag="mcp_server_restarted", frozen=True):
    """One of the session's MCP servers is restarting (`RestartMcpServer`). A session event."""

    server: str
    note: str


class NetworkConnection(EventBase, tag="network_connection", frozen=True):
    """A sandboxed command's connection through the session's network proxy (the
    `sandbox.network` allowlist), recorded as it ends; a refused one at once. A session event:
    a background command connects outside any run."""

    host: str
    """The host the command named (a name, or an address as it wrote it)."""
    port: int
    allowed: bool
    how: Literal["connect", "http", "socks5"]
    """HTTP `CONNECT` (a tunnel: TLS and the rest), a plain `http://` request, or SOCKS5."""
    reason: str = ""
    """Which list, or whose answer, let it through or refused it; why it failed."""
    bytes_up: int = 0
    """Sent from the command to the host."""
    bytes_down: int = 0


class NetworkAccessRequested(EventBase, tag="network_access_requested", frozen=True):
    """A sandboxed command connects to a host on neither `sandbox.network` list: the
    connection waits for `AnswerNetworkAccess` with this `request_id`. A session event."""

    request_id: str
    host: str
    port: int


class NetworkAccessDecided(EventBase, tag="network_access_decided", frozen=True):
    """The person answered a `network_access_requested` (`AnswerNetworkAccess`): "session" lets
    the host through for the rest of the session, "always" writes it into
    `.moot/settings.local.json`'s `sandbox.network.allowedDomains`. A session event."""

    request_id: str
    host: str
    approved: bool
    scope: Literal["once", "session", "always"] = "once"
    note: str = ""
    """What an "always" wrote, or why it could not."""


class McpQuestionAsked(EventBase, tag="mcp_question_asked", frozen=True):
    """An MCP server asks the person something (`elicitation/create`, form mode): answer with
    `AnswerMcpQuestion` and the same `ask_id`. A session event: a server may ask at any time.

    Only front ends that put such questions to the person make the session offer them to its
    servers (`SessionOptions.asks_mcp_questions`: the app and the REPL); elsewhere the servers
    are not told they may ask.
    """

    ask_id: str
    server: str
    message: str
    schema: dict[str, Any]
    """The answer's JSON schema: an object of flat properties (string, number, integer,
    boolean, or a string `enum`), some `required`."""


class McpSampled(EventBase, tag="mcp_sampled", frozen=True):
    """The session's model answered an MCP server's request (`sampling/createMessage`) that the
    person approved. A session event; its usage counts in the session's cost ledger."""

    server: str
    model: str
    usage: Usage = msgspec.field(default_factory=Usage)
    cost_usd: float = 0.0


class McpQuestionAnswered(EventBase, tag="mcp_question_answered", frozen=True):
    """A server's question was answered (`AnswerMcpQuestion`), or ended unanswered (`by`
    "session": the session closed, or the server stopped waiting). What the person filled in
    goes to the server only; the log keeps the action."""

    ask_id: str
    server: str
    action: Literal["accept", "decline", "cancel"]
    by: Literal["user", "session"] = "user"
