"""What moot and its MCP host process say to each other: one JSON object per line.

The MCP connections of a session live in a child process (`moot.mcp.host`), not in moot's own:
the SDK costs about a second of CPU to import (pydantic models for two protocol eras), and in a
thread that second would hold the interpreter lock, tripling the time of everything moot does
meanwhile (the app starting, the first model request). In its own process it runs on another
core, and a server that floods or crashes cannot touch moot's memory. The messages are the
questions moot asks (each with an `id` its answer carries) and the host's reports.
"""

from __future__ import annotations

from typing import Any

import msgspec

from moot.protocol.mcp import McpPromptInfo, McpResourceText, McpServerConfig, ServerState


class _Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    pass


# ---- moot -> host ---------------------------------------------------------------------------


class Setup(_Message, tag="setup", frozen=True):
    """The first message: where the host keeps what it writes."""

    workspace: str
    outputs_dir: str
    """Where a capped result's full text is saved (the session's outputs directory)."""
    log_dir: str
    """Where each server's stderr goes (`<name>.log`)."""
    auth_file: str
    """Where OAuth tokens of remote servers are kept (0600)."""
    max_output_chars: int
    elicitation: bool = False
    """Someone answers servers' questions (`elicitation/create`, `Elicit`): the capability is
    advertised only then."""
    sampling: bool = False
    """The servers may ask the session's model (`sampling/createMessage`, an `Elicit` with
    `sampling`), the person approving each request: advertised only then."""
    sampling_allowed: tuple[str, ...] = ()
    """Servers that may ask the model without the person (the user's `mcpSamplingAllowed`):
    advertised to them wherever the session runs."""
    roots: tuple[str, ...] = ()
    """The directories the session works in (the workspace first, then any it was given), as
    the servers are told them (`roots/list`)."""


class StartServer(_Message, tag="start", frozen=True):
    """Connect to a server (again, if it ran): answered by `ServerUpdate`s."""

    server: McpServerConfig


class CallTool(_Message, tag="call_tool", frozen=True):
    id: int
    server: str
    tool: str
    """The server's own name for it."""
    arguments: dict[str, Any]


class GetPrompt(_Message, tag="get_prompt", frozen=True):
    id: int
    server: str
    prompt: str
    arguments: dict[str, str]


class ReadResource(_Message, tag="read_resource", frozen=True):
    id: int
    server: str
    uri: str


class Stop(_Message, tag="stop", frozen=True):
    """Close every connection (each server's process ends) and exit."""


class ElicitAnswer(_Message, tag="elicit_answer", frozen=True):
    """The answer to a server's question (`Elicit`): accept (with `content`), decline, cancel."""

    ask_id: int
    action: str
    content: dict[str, Any] | None = None


Request = Setup | StartServer | CallTool | GetPrompt | ReadResource | Stop | ElicitAnswer


# ---- host -> moot ---------------------------------------------------------------------------


class ToolDef(msgspec.Struct, frozen=True):
    """A server's tool as it listed it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = msgspec.field(default_factory=dict)
    read_only: bool = False
    """The server says it only reads (`readOnlyHint`); a hint, never a permission."""


class ServerUpdate(_Message, tag="server", frozen=True):
    """A server's state changed (and, when ready, what it offers)."""

    server: str
    state: ServerState
    tools: tuple[ToolDef, ...] = ()
    prompts: tuple[McpPromptInfo, ...] = ()
    resources: tuple[str, ...] = ()
    error: str = ""
    auth_url: str = ""
    pid: int | None = None
    """A stdio server's process (its own process group), so moot can end it if the host dies."""
    restarts: int = 0


class ToolAnswer(_Message, tag="tool_answer", frozen=True):
    id: int
    text: str
    """What the model reads, capped (the full text saved, and named in the cut)."""
    is_error: bool = False
    images: tuple[tuple[str, str], ...] = ()
    """(mime type, base64 data) of each image."""


class PromptAnswer(_Message, tag="prompt_answer", frozen=True):
    id: int
    text: str


class ResourceAnswer(_Message, tag="resource_answer", frozen=True):
    id: int
    resource: McpResourceText


class Failure(_Message, tag="failure", frozen=True):
    """A question could not be answered; `message` says why, for the model or the person."""

    id: int
    message: str


class Progress(_Message, tag="progress", frozen=True):
    """A server's progress on a tool call still running (`notifications/progress`), as the
    line the tool's block shows."""

    id: int
    text: str


class Elicit(_Message, tag="elicit", frozen=True):
    """A server asks the person something (`elicitation/create`, form mode): answered by
    `ElicitAnswer` with the same `ask_id`."""

    ask_id: int
    server: str
    message: str
    schema: dict[str, Any]
    sampling: dict[str, Any] | None = None
    """Set: not a question but a request for the session's model (`sampling/createMessage`):
    `system`, `messages` (`[role, text]` pairs) and `max_tokens`; an accepting answer's
    content is `{"text", "model"}`."""


Report = ServerUpdate | ToolAnswer | PromptAnswer | ResourceAnswer | Failure | Progress | Elicit

_encoder = msgspec.json.Encoder()
_requests = msgspec.json.Decoder(Request)
_reports = msgspec.json.Decoder(Report)


def encode(message: Request | Report) -> bytes:
    """One message as a line."""
    return _encoder.encode(message) + b"\n"


def decode_request(line: bytes) -> Request:
    """Raises `msgspec.ValidationError` or `msgspec.DecodeError` for what is not a request."""
    return _requests.decode(line)


def decode_report(line: bytes) -> Report:
    """Raises `msgspec.ValidationError` or `msgspec.DecodeError` for what is not a report."""
    return _reports.decode(line)
