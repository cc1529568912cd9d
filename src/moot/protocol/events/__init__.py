"""Events: what the runtime reports, in the order it happened.

Every event is written to the store before any front end sees it. Each carries `seq` (its place
in the session's log, assigned by the store), `session_id`, `run_id` (the person's turn it
belongs to), `agent`, `call_id` (the agent call it happened in), `parent_call_id` (the call that
made that one, None for the person's turn) and a UTC time stamp `ts` (`base.EventBase`).

This package is the contract's one namespace of events: front ends and every layer import them
from here (`from moot.protocol import events as ev`; `ev.TurnStarted`), never from the modules
that define them, so it re-exports each one. They are defined by what they report: calls and
the run-state machine (`calls`), the model (`model`), tool calls and their approvals
(`tools`), the session between runs (`session`), compactions (`compaction`), hooks (`hooks`)
and messages between peers (`peers`). Here are the union of them all, `Event`, the sets of
kinds, and their JSON form.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar, get_args

import msgspec
from msgspec.structs import astuple

from moot.protocol.events.base import EventBase, utc_now
from moot.protocol.events.calls import (
    AgentCalled,
    AgentReturned,
    AutoCommitted,
    Error,
    LimitHit,
    RunResumed,
    StateChanged,
    TurnFinished,
    TurnStarted,
)
from moot.protocol.events.compaction import CompactTrigger, ContextCompacted, HistoryCompacted
from moot.protocol.events.hooks import HookCommandRun, HookEventName, HookRan
from moot.protocol.events.model import (
    GateDecided,
    ModelResponded,
    TextDelta,
    ThinkingDelta,
    UsageRecorded,
)
from moot.protocol.events.peers import MessagesDelivered, MessageSent, WaitingForMessage
from moot.protocol.events.session import (
    FilesRestored,
    McpQuestionAnswered,
    McpQuestionAsked,
    McpSampled,
    McpServerApproved,
    McpServerRestarted,
    MemoryNoted,
    ModeChanged,
    ModelChanged,
    NetworkAccessDecided,
    NetworkAccessRequested,
    NetworkConnection,
    OpRefused,
    RunToolsInterrupted,
    SessionForked,
    SessionRenamed,
    SessionResumed,
    ToolRan,
)
from moot.protocol.events.tools import (
    ApprovalDecided,
    ApprovalRequested,
    ToolFinished,
    ToolOutput,
    ToolStarted,
)
from moot.protocol.messages import plain_value

__all__ = [
    "CREATION_KINDS",
    "EVENT_KINDS",
    "SESSION_KINDS",
    "TERMINAL_KINDS",
    "AgentCalled",
    "AgentReturned",
    "ApprovalDecided",
    "ApprovalRequested",
    "AutoCommitted",
    "CompactTrigger",
    "ContextCompacted",
    "Error",
    "Event",
    "EventBase",
    "EventT",
    "FilesRestored",
    "GateDecided",
    "HistoryCompacted",
    "HookCommandRun",
    "HookEventName",
    "HookRan",
    "LimitHit",
    "McpQuestionAnswered",
    "McpQuestionAsked",
    "McpSampled",
    "McpServerApproved",
    "McpServerRestarted",
    "MemoryNoted",
    "MessageSent",
    "MessagesDelivered",
    "ModeChanged",
    "ModelChanged",
    "ModelResponded",
    "NetworkAccessDecided",
    "NetworkAccessRequested",
    "NetworkConnection",
    "OpRefused",
    "RunResumed",
    "RunToolsInterrupted",
    "SessionForked",
    "SessionRenamed",
    "SessionResumed",
    "StateChanged",
    "TextDelta",
    "ThinkingDelta",
    "ToolFinished",
    "ToolOutput",
    "ToolRan",
    "ToolStarted",
    "TurnFinished",
    "TurnStarted",
    "UsageRecorded",
    "WaitingForMessage",
    "checked_json",
    "event_from_dict",
    "event_from_json",
    "event_to_json",
    "utc_now",
]

Event = (
    TurnStarted
    | AgentCalled
    | AgentReturned
    | TurnFinished
    | RunResumed
    | AutoCommitted
    | StateChanged
    | LimitHit
    | Error
    | TextDelta
    | ThinkingDelta
    | ModelResponded
    | UsageRecorded
    | GateDecided
    | ApprovalRequested
    | ApprovalDecided
    | ToolStarted
    | ToolOutput
    | ToolFinished
    | ModeChanged
    | ModelChanged
    | SessionRenamed
    | SessionResumed
    | SessionForked
    | ToolRan
    | OpRefused
    | HookRan
    | MemoryNoted
    | ContextCompacted
    | HistoryCompacted
    | MessageSent
    | MessagesDelivered
    | WaitingForMessage
    | RunToolsInterrupted
    | FilesRestored
    | McpServerApproved
    | McpServerRestarted
    | NetworkConnection
    | NetworkAccessRequested
    | NetworkAccessDecided
    | McpQuestionAsked
    | McpQuestionAnswered
    | McpSampled
)
"""Any event; tagged by `kind` in JSON."""

EVENT_KINDS = frozenset(str(cls.__struct_config__.tag) for cls in get_args(Event))
"""Every event's `kind`: a query for all but a few kinds names the rest (no deltas, say)."""

CREATION_KINDS = frozenset({"turn_started", "agent_called"})
TERMINAL_KINDS = frozenset({"turn_finished", "agent_returned"})
SESSION_KINDS = frozenset(
    {
        "mode_changed",
        "model_changed",
        "session_renamed",
        "session_resumed",
        "session_forked",
        "tool_ran",
        "op_refused",
        "memory_noted",
        "history_compacted",
        "run_tools_interrupted",
        "files_restored",
        "mcp_server_approved",
        "mcp_server_restarted",
        "network_connection",
        "network_access_requested",
        "network_access_decided",
        "mcp_question_asked",
        "mcp_question_answered",
        "mcp_sampled",
    }
)
"""Events of the session rather than of a run: no `run_id` or `call_id`, stored at any time."""


@cache
def _decoder() -> msgspec.json.Decoder[Event]:
    # Built at the first decode, not at import: it evaluates every event's annotations (~4 ms),
    # and a new session (`moot -p`) decodes nothing before its first model request.
    return msgspec.json.Decoder(Event)


_ENCODE = msgspec.json.Encoder(enc_hook=plain_value).encode
_BINARY = (bytes, bytearray, memoryview)


def event_from_json(data: str | bytes) -> Event:
    """Parse one event from its JSON form (the log and `--output-format events` use this form).

    Raises:
        msgspec.ValidationError: the JSON is not an event (names the field at fault).
    """
    return _decoder().decode(data)


EventT = TypeVar("EventT", bound=EventBase)


def checked_json(event: EventT) -> tuple[str, EventT]:
    """`event`'s JSON form and the event read back from it, which is what gets stored and
    shown: so a live run sees exactly what a resumed one will (a list where a tuple belongs
    becomes the tuple). A value of the wrong type (a number where the model's text should
    be, say) raises here instead of leaving a log that cannot be read again. Events are not
    checked on construction, so the store checks each one on append with this.

    Raises:
        ValueError: the event does not fit its schema; the message names the field.
    """
    # Field values in one C call (every append runs this: ~3 µs less an event than getattr
    # by name with a union built each time).
    for name, value in zip(event.__struct_fields__, astuple(event), strict=True):
        if isinstance(value, _BINARY):
            # msgspec would write them as base64, which reads back as a `str`: wrong, silently.
            raise ValueError(f"{event.kind} does not fit its schema: bytes in `{name}`")
    try:
        body = _ENCODE(event)
        # By the event's own type: msgspec caches what it learns per type, and a new session
        # decodes nothing else before its first model request (see `_decoder`).
        back = msgspec.json.decode(body, type=type(event))
    except (msgspec.ValidationError, TypeError, OverflowError, UnicodeEncodeError) as exc:
        raise ValueError(f"{event.kind} does not fit its schema: {exc}") from None
    return body.decode(), back


def event_from_dict(data: dict[str, Any]) -> Event:
    return msgspec.convert(data, Event)


def event_to_json(event: EventBase) -> str:
    return _ENCODE(event).decode()
