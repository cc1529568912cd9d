"""Events: what the runtime reports, in the order it happened.

Every event is written to the store before any front end sees it. Each carries `seq` (its place
in the session's log, assigned by the store), `session_id`, `run_id` (the person's turn it
belongs to), `agent`, `call_id` (the agent call it happened in), `parent_call_id` (the call that
made that one, None for the person's turn) and a UTC time stamp `ts`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any, Literal, TypeVar, get_args

import msgspec
from msgspec.structs import astuple

from moot.protocol.messages import (
    AttachedFile,
    Attachment,
    Thinking,
    ToolCall,
    Usage,
    plain_value,
)
from moot.protocol.modes import ModeName
from moot.protocol.states import RunState, StopReason


def utc_now() -> datetime:
    return datetime.now(UTC)


class _Event(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"
):
    # msgspec rather than pydantic: events are made, written and read on every step, and
    # `moot -p` imports them before its first request (pydantic's import and model building
    # cost ~100 ms of start-up; msgspec's ~10). Types are checked when an event is decoded,
    # not when the runtime builds one from values it already has.

    seq: int = 0
    """Position in the session's log, from 1; the store assigns it on append."""
    session_id: str = ""
    run_id: str = ""
    """The person's turn this belongs to: the call id of that turn's first call."""
    agent: str = ""
    """The agent whose call this happened in."""
    call_id: str = ""
    parent_call_id: str | None = None
    ts: datetime = msgspec.field(default_factory=utc_now)
    submission_id: str = ""
    """The op this event answers (`Client.submit` returned it): a run's events carry the
    submission that started it, `approval_decided` that of the `Approve`/`Deny`, what an
    interrupt ends that of the `Interrupt`. Empty for events no op caused."""

    @property
    def kind(self) -> str:
        """What happened (`turn_started`, `tool_finished`, ...): the tag in the JSON form."""
        return self.__struct_config__.tag  # type: ignore[return-value]


# ---- creation and ending of calls --------------------------------------------------------------


class TurnStarted(_Event, tag="turn_started", frozen=True):
    """The person sent a message to an agent: a new run begins (its creation event)."""

    prompt: str
    attachments: tuple[Attachment, ...] = ()
    files: tuple[AttachedFile, ...] = ()
    """Workspace files the prompt names as `@path`, read as the run began: the model reads
    them with the prompt, and a resumed run folds the same text."""
    limits: dict[str, Any] = msgspec.field(default_factory=dict)
    """The limits in force for this run, as configured."""
    mode: ModeName | None = None
    """The session's permission mode as the run began (None: no modes); in plan mode the
    model is told so with the prompt."""
    starting_agents: tuple[str, ...] = ()
    """Several agents got the message at once (`UserTurn.agents`): the run's first call is
    then the person's own (`agent` is `user`, with no model), which calls each of them."""
    model: str = ""
    """The model the run's first agent answers with in this run only (`UserTurn.model`);
    empty: the agent's own."""
    pool: tuple[str, ...] = ()
    """The session's agents as the run began, the person's agent first: only these start or
    are called in it, and a resumed session goes on with them unless the front end names
    others. Empty in logs from before it was recorded."""


class AgentCalled(_Event, tag="agent_called", frozen=True):
    """A forward message: one agent called another (the callee's call is created)."""

    caller: str
    message: str
    depth: int
    """1 for a call made by the person's first agent, 2 for one made by its callee, ..."""
    tool_call_id: str | None = None
    """The caller's `call_agent` tool call that carries this forward."""
    mode: ModeName | None = None
    """The session's permission mode as the call began (see `TurnStarted.mode`)."""
    with_history: bool = False
    """The callee sees its earlier exchange with this caller first (the run's history setting)."""
    background: bool = False
    """A background agent: its caller went on at once (its `call_agent` or
    `spawn_background_agent` result is the task id, which is this `call_id`); its return
    reaches the caller as a message at the caller's next step."""


class AgentReturned(_Event, tag="agent_returned", frozen=True):
    """A return message: a called agent finished (terminal for its call)."""

    state: RunState
    stop_reason: StopReason
    output: str


class TurnFinished(_Event, tag="turn_finished", frozen=True):
    """The person's turn ended (terminal for the run's first call)."""

    state: RunState
    stop_reason: StopReason
    output: str
    turns: int
    """Model turns taken across every call in the run."""
    usage: Usage
    cost_usd: float
    duration_ms: float


class AutoCommitted(_Event, tag="auto_committed", frozen=True):
    """The files the turn changed were committed as moot's own commit (`moot undo` takes it
    back), as the turn ended."""

    sha: str
    subject: str
    files: tuple[str, ...] = ()
    note: str = ""
    """What the person should know about it (the repository's hooks did not run)."""


class RunResumed(_Event, tag="run_resumed", frozen=True):
    """An unfinished run continues after a crash or a stop of the process."""

    interrupted_tool_calls: tuple[str, ...] = ()
    """Tool calls that had started without a recorded result; never re-run."""


# ---- the state machine ----------------------------------------------------------------------


class StateChanged(_Event, tag="state_changed", frozen=True):
    """The call's run state moved along a legal transition."""

    from_state: RunState
    to_state: RunState


class LimitHit(_Event, tag="limit_hit", frozen=True):
    """A limit was reached before the next model call or tool; the run stops."""

    stop_reason: StopReason
    detail: str


class Error(_Event, tag="error", frozen=True):
    """Something went wrong that the run reports (a provider error, an internal bug)."""

    source: Literal["provider", "tool", "sandbox", "session", "internal"]
    """`sandbox`: a command tried what its sandbox forbids (a write outside, the network);
    `session`: what the session does around the run failed (an auto-commit), the run did not."""
    message: str
    retryable: bool = False
    model: str | None = None
    """The model that failed (a `provider` error); None for every other source."""


# ---- the model ------------------------------------------------------------------------------


class TextDelta(_Event, tag="text_delta", frozen=True):
    """A piece of the model's answer as it streams."""

    text: str


class ThinkingDelta(_Event, tag="thinking_delta", frozen=True):
    """A piece of the model's reasoning as it streams."""

    text: str


class ModelResponded(_Event, tag="model_responded", frozen=True):
    """A complete model turn: the decision the loop acts on."""

    model: str
    text: str = ""
    thinking: tuple[Thinking, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    """The provider's own reason for ending the turn (`end_turn`, `tool_use`, `length`, ...)."""
    partial: bool = False
    """The stream broke after this much arrived; the run fails with provider_error."""


class UsageRecorded(_Event, tag="usage", frozen=True):
    """Tokens and cost of one model call."""

    model: str
    usage: Usage
    cost_usd: float = 0.0


class GateDecided(_Event, tag="gate_decided", frozen=True):
    """A turn gate changed what happens to the model turn just received."""

    action: Literal["replace", "retry", "stop"]
    text: str = ""
    """replace: the new answer text; retry: the feedback to the model; stop: the result."""
    tool_calls: tuple[ToolCall, ...] = ()
    """replace: the new tool calls."""


# ---- tools ----------------------------------------------------------------------------------


class ApprovalRequested(_Event, tag="approval_requested", frozen=True):
    """A tool call waits for the person: answer with `Approve` or `Deny`."""

    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    preview: str = ""
    """What the person should look at: a diff, the exact command, ..."""
    reason: str = ""
    suggested_rules: tuple[str, ...] = ()
    """Allow rules an answer "for the session" or "always" would keep."""


class ApprovalDecided(_Event, tag="approval_decided", frozen=True):
    """A tool call was allowed or refused, by a person or a rule."""

    tool_call_id: str
    approved: bool
    by: Literal["user", "policy", "hook"]
    """"hook": a PreToolUse hook from the settings refused or allowed the call."""
    feedback: str = ""
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    """The allow rule kept by a "session" or "always" approval."""


# ---- session events: they belong to no run ----------------------------------------------------


class ModeChanged(_Event, tag="mode_changed", frozen=True):
    """The session's permission mode changed (a `SetMode` op, or an approved plan).

    A session event: `run_id` and `call_id` are empty, because a mode outlives runs and may
    change between them.
    """

    mode: ModeName
    previous: ModeName
    by: Literal["user", "plan_approval"] = "user"
    """"plan_approval": the person approved a plan (`exit_plan_mode`), which leaves plan mode."""


class SessionRenamed(_Event, tag="session_renamed", frozen=True):
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


class SessionResumed(_Event, tag="session_resumed", frozen=True):
    """A stored session was opened again (`moot -c`, `moot -r`, `/resume`): where a sitting
    begins. A session event, recorded before anything else of the sitting (the switches its
    flags make, `mode_changed` and `model_changed`, follow it); no fold takes it."""

    model: str
    """The model the person's agent answers with in this sitting."""
    mode: ModeName | None = None
    """The permission mode the sitting works in (None: the session has no modes)."""
    agents: tuple[str, ...] = ()
    """The session's agents, the person's agent first (as `turn_started.pool`)."""


class SessionForked(_Event, tag="session_forked", frozen=True):
    """The events before this one were copied from session `source` (its events up to `at`):
    a fork (`moot sessions fork`, `/fork`, `/rewind`) begins here. A session event; no fold
    takes it. What the copied events record was spent in `source`, so the cost ledger counts
    a session's usage from its last `session_forked` on."""

    source: str
    at: int


class ModelChanged(_Event, tag="model_changed", frozen=True):
    """An agent's model changed (a `SetModel` op); its next turn asks the new one.

    A session event (no run); `agent` names the agent whose model it is.
    """

    model: str
    previous: str


class ToolRan(_Event, tag="tool_ran", frozen=True):
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


class OpRefused(_Event, tag="op_refused", frozen=True):
    """An op could not be carried out: it matched nothing (an `Approve` for a call that waits
    on no approval), or the session was in no state for it. A session event."""

    op: str
    """The op's kind (`approve`, `deny`, ...)."""
    reason: str


class MemoryNoted(_Event, tag="memory_noted", frozen=True):
    """The person added a note to the project's memory (`NoteToMemory`). A session event."""

    path: str
    """The memory file written."""
    note: str


class ToolStarted(_Event, tag="tool_started", frozen=True):
    """A tool began to run; from here on it may have had side effects."""

    tool_call_id: str
    tool: str
    arguments: dict[str, Any]


class ToolOutput(_Event, tag="tool_output", frozen=True):
    """Output a running tool produced so far."""

    tool_call_id: str
    text: str


class ToolFinished(_Event, tag="tool_finished", frozen=True):
    """A tool's result: what the model will see."""

    tool_call_id: str
    tool: str
    content: str
    is_error: bool = False
    attachments: tuple[Attachment, ...] = ()
    duration_ms: float = 0.0
    interrupted: bool = False
    """The tool started before a crash or an interrupt and its real result is unknown."""
    display: dict[str, Any] = msgspec.field(default_factory=dict)
    """Structured data for front ends (a diff, a task list); never sent to the model."""


# ---- compaction ---------------------------------------------------------------------------

CompactTrigger = Literal["manual", "auto", "overflow"]


class _Compaction(_Event, frozen=True):
    """What a compaction did to a conversation; the fold applies it (`core/compact.py::apply`).

    The fold replaces the first `replaced` messages by one summary message (or puts the summary
    before the first kept message when that is the person's) and blanks the results of the
    tool calls in `elided`; later messages stay verbatim. The event holds every choice, so a
    resume folds to the same messages without asking a model again.
    """

    summary: str = ""
    replaced: int = 0
    """Leading messages the summary stands for (0: none; only tool outputs were elided)."""
    elided: tuple[str, ...] = ()
    """Tool call ids whose results are blanked (the deterministic fallback, oldest first)."""
    trigger: CompactTrigger = "manual"
    """manual: the person (`/compact`); auto: the next request would pass the threshold;
    overflow: the provider said the request was too long."""
    method: Literal["model", "fallback"] = "model"
    """model: the summary is the model's; fallback: summarising failed, nothing was asked."""
    focus: str = ""
    """What the person asked the summary to keep (`/compact focus`)."""
    tokens_before: int = 0
    tokens_after: int = 0
    """Estimated tokens of the messages before and after."""
    model: str = ""
    """The model that summarised (empty: none was asked)."""
    usage: Usage = msgspec.field(default_factory=Usage)
    """What summarising cost: it counts toward the run's budget and the session's ledger."""
    cost_usd: float = 0.0


class ContextCompacted(_Compaction, tag="context_compacted", frozen=True):
    """A call's conversation was compacted while its run went on (automatically, or after the
    provider refused a request as too long)."""


class HistoryCompacted(_Compaction, tag="history_compacted", frozen=True):
    """An agent's conversation with the person was compacted between runs (`Compact`); a
    session event, `agent` names whose conversation it is."""


# ---- hooks ----------------------------------------------------------------------------------

HookEventName = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "PreCompact",
    "Notification",
]


class HookCommandRun(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One hook command that ran: how it ended, and the start of what it printed."""

    command: str
    exit_code: int | None = None
    """None when it timed out or could not start."""
    duration_ms: float = 0.0
    outcome: Literal["ok", "allow", "ask", "deny", "block", "stop", "error", "timeout"]
    """What this command said: `error` and `timeout` are non-blocking errors."""
    stdout: str = ""
    """Capped; the head is kept."""
    stderr: str = ""


class HookRan(_Event, tag="hook_ran", frozen=True):
    """Hook commands from the settings ran on a session event; what they agreed on.

    The fold applies it, so a resumed run sees what the live one saw: `context` joins the
    prompt (SessionStart, UserPromptSubmit) or a tool result (PostToolUse), or is a Stop
    hook's feedback as a new user message; `updated_input` replaces a tool call's arguments.
    """

    hook_event: HookEventName
    commands: tuple[HookCommandRun, ...] = ()
    tool_call_id: str | None = None
    """PreToolUse and PostToolUse: the tool call the hooks saw."""
    decision: Literal["none", "allow", "ask", "deny", "block"] = "none"
    reason: str = ""
    context: str = ""
    """What the model is told because of the hooks (empty: nothing)."""
    updated_input: dict[str, Any] | None = None
    """PreToolUse: the arguments the tool call runs with instead of the model's."""
    stop: bool = False
    """A hook said `continue: false`: the run ends with stop reason `hook_blocked`."""
    stop_reason: str = ""
    """With `stop`: the hook's `stopReason`, shown to the person."""


class MessageSent(_Event, tag="message_sent", frozen=True):
    """A message between peers while they run (`send_message`, or the person's `SendMessage`).

    Recorded in the sender's call; the person's messages in the receiver's call. The receiver
    reads it at its next step (`messages_delivered`)."""

    sender: str
    """The agent that sent it, or `user` (the person)."""
    to_call_id: str | None
    """The receiving call (its task id); None: the person."""
    to_agent: str
    text: str


class MessagesDelivered(_Event, tag="messages_delivered", frozen=True):
    """A call read the first `count` messages waiting for it (messages, background results),
    just before asking its model: they join its conversation as one user message."""

    count: int


class WaitingForMessage(_Event, tag="waiting_for_message", frozen=True):
    """The call waits for a message or a background agent's return to reach it: a
    `get_messages` with `wait_seconds`, or an answer held back until its background agents
    return. The `get_messages` waits until its result; an answer held back until the call's
    next event other than a delta or a state change (`protocol.activity`). The fold reads
    nothing from it."""

    timeout_s: float | None = None
    """How long it waits at most; None: until something arrives (its background agents
    return, or are cancelled, within the run's budget)."""
    tool_call_id: str | None = None
    """The `get_messages` tool call that waits; None: the call's answer waits."""


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
    """Parse one event from its JSON form (the log and `stream-json` use this form).

    Raises:
        msgspec.ValidationError: the JSON is not an event (names the field at fault).
    """
    return _decoder().decode(data)


EventT = TypeVar("EventT", bound=_Event)


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


def event_to_json(event: _Event) -> str:
    return _ENCODE(event).decode()
