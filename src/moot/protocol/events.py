"""Events: what the runtime reports, in the order it happened.

Every event is written to the store before any front end sees it. Each carries `seq` (its place
in the session's log, assigned by the store), `session_id`, `run_id` (the person's turn it
belongs to), `agent`, `call_id` (the agent call it happened in), `parent_call_id` (the call that
made that one, None for the person's turn) and a UTC time stamp `ts`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from moot.protocol.messages import Attachment, Thinking, ToolCall, Usage
from moot.protocol.modes import ModeName
from moot.protocol.states import RunState, StopReason


def utc_now() -> datetime:
    return datetime.now(UTC)


class _Event(BaseModel):
    # defer_build: a model's validator is built at its first use, not at import; a run uses
    # only some kinds, and start-up is a benchmark (`moot -p` to its first request).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    seq: int = 0
    """Position in the session's log, from 1; the store assigns it on append."""
    session_id: str = ""
    run_id: str = ""
    """The person's turn this belongs to: the call id of that turn's first call."""
    agent: str = ""
    """The agent whose call this happened in."""
    call_id: str = ""
    parent_call_id: str | None = None
    ts: datetime = Field(default_factory=utc_now)


# ---- creation and ending of calls --------------------------------------------------------------


class TurnStarted(_Event):
    """The person sent a message to an agent: a new run begins (its creation event)."""

    kind: Literal["turn_started"] = "turn_started"
    prompt: str
    attachments: tuple[Attachment, ...] = ()
    limits: dict[str, Any] = Field(default_factory=dict)
    """The limits in force for this run, as configured."""
    mode: ModeName | None = None
    """The session's permission mode as the run began (None: no modes); in plan mode the
    model is told so with the prompt."""


class AgentCalled(_Event):
    """A forward message: one agent called another (the callee's call is created)."""

    kind: Literal["agent_called"] = "agent_called"
    caller: str
    message: str
    depth: int
    """1 for a call made by the person's first agent, 2 for one made by its callee, ..."""
    tool_call_id: str | None = None
    """The caller's `call_agent` tool call that carries this forward."""
    mode: ModeName | None = None
    """The session's permission mode as the call began (see `TurnStarted.mode`)."""


class AgentReturned(_Event):
    """A return message: a called agent finished (terminal for its call)."""

    kind: Literal["agent_returned"] = "agent_returned"
    state: RunState
    stop_reason: StopReason
    output: str


class TurnFinished(_Event):
    """The person's turn ended (terminal for the run's first call)."""

    kind: Literal["turn_finished"] = "turn_finished"
    state: RunState
    stop_reason: StopReason
    output: str
    turns: int
    """Model turns taken across every call in the run."""
    usage: Usage
    cost_usd: float
    duration_ms: float


class RunResumed(_Event):
    """An unfinished run continues after a crash or a stop of the process."""

    kind: Literal["run_resumed"] = "run_resumed"
    interrupted_tool_calls: tuple[str, ...] = ()
    """Tool calls that had started without a recorded result; never re-run."""


# ---- the state machine ----------------------------------------------------------------------


class StateChanged(_Event):
    """The call's run state moved along a legal transition."""

    kind: Literal["state_changed"] = "state_changed"
    from_state: RunState
    to_state: RunState


class LimitHit(_Event):
    """A limit was reached before the next model call or tool; the run stops."""

    kind: Literal["limit_hit"] = "limit_hit"
    stop_reason: StopReason
    detail: str


class Error(_Event):
    """Something went wrong that the run reports (a provider error, an internal bug)."""

    kind: Literal["error"] = "error"
    source: Literal["provider", "tool", "sandbox", "internal"]
    """`sandbox`: a command tried what its sandbox forbids (a write outside, the network)."""
    message: str
    retryable: bool = False


# ---- the model ------------------------------------------------------------------------------


class TextDelta(_Event):
    """A piece of the model's answer as it streams."""

    kind: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDelta(_Event):
    """A piece of the model's reasoning as it streams."""

    kind: Literal["thinking_delta"] = "thinking_delta"
    text: str


class ModelResponded(_Event):
    """A complete model turn: the decision the loop acts on."""

    kind: Literal["model_responded"] = "model_responded"
    model: str
    text: str = ""
    thinking: tuple[Thinking, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    """The provider's own reason for ending the turn (`end_turn`, `tool_use`, `length`, ...)."""
    partial: bool = False
    """The stream broke after this much arrived; the run fails with provider_error."""


class UsageRecorded(_Event):
    """Tokens and cost of one model call."""

    kind: Literal["usage"] = "usage"
    model: str
    usage: Usage
    cost_usd: float = 0.0


class GateDecided(_Event):
    """A turn gate changed what happens to the model turn just received."""

    kind: Literal["gate_decided"] = "gate_decided"
    action: Literal["replace", "retry", "stop"]
    text: str = ""
    """replace: the new answer text; retry: the feedback to the model; stop: the result."""
    tool_calls: tuple[ToolCall, ...] = ()
    """replace: the new tool calls."""


# ---- tools ----------------------------------------------------------------------------------


class ApprovalRequested(_Event):
    """A tool call waits for the person: answer with `Approve` or `Deny`."""

    kind: Literal["approval_requested"] = "approval_requested"
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]
    preview: str = ""
    """What the person should look at: a diff, the exact command, ..."""
    reason: str = ""
    suggested_rules: tuple[str, ...] = ()
    """Allow rules an answer "for the session" or "always" would keep."""


class ApprovalDecided(_Event):
    """A tool call was allowed or refused, by a person or a rule."""

    kind: Literal["approval_decided"] = "approval_decided"
    tool_call_id: str
    approved: bool
    by: Literal["user", "policy", "hook"]
    """"hook": a PreToolUse hook from the settings refused or allowed the call."""
    feedback: str = ""
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    """The allow rule kept by a "session" or "always" approval."""


# ---- session events: they belong to no run ----------------------------------------------------


class ModeChanged(_Event):
    """The session's permission mode changed (a `SetMode` op, or an approved plan).

    A session event: `run_id` and `call_id` are empty, because a mode outlives runs and may
    change between them.
    """

    kind: Literal["mode_changed"] = "mode_changed"
    mode: ModeName
    previous: ModeName
    by: Literal["user", "plan_approval"] = "user"
    """"plan_approval": the person approved a plan (`exit_plan_mode`), which leaves plan mode."""


class ToolStarted(_Event):
    """A tool began to run; from here on it may have had side effects."""

    kind: Literal["tool_started"] = "tool_started"
    tool_call_id: str
    tool: str
    arguments: dict[str, Any]


class ToolOutput(_Event):
    """Output a running tool produced so far."""

    kind: Literal["tool_output"] = "tool_output"
    tool_call_id: str
    text: str


class ToolFinished(_Event):
    """A tool's result: what the model will see."""

    kind: Literal["tool_finished"] = "tool_finished"
    tool_call_id: str
    tool: str
    content: str
    is_error: bool = False
    attachments: tuple[Attachment, ...] = ()
    duration_ms: float = 0.0
    interrupted: bool = False
    """The tool started before a crash or an interrupt and its real result is unknown."""
    display: dict[str, Any] = Field(default_factory=dict)
    """Structured data for front ends (a diff, a task list); never sent to the model."""


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


class HookCommandRun(BaseModel):
    """One hook command that ran: how it ended, and the start of what it printed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    exit_code: int | None = None
    """None when it timed out or could not start."""
    duration_ms: float = 0.0
    outcome: Literal["ok", "allow", "ask", "deny", "block", "stop", "error", "timeout"]
    """What this command said: `error` and `timeout` are non-blocking errors."""
    stdout: str = ""
    """Capped; the head is kept."""
    stderr: str = ""


class HookRan(_Event):
    """Hook commands from the settings ran on a session event; what they agreed on.

    The fold applies it, so a resumed run sees what the live one saw: `context` joins the
    prompt (SessionStart, UserPromptSubmit) or a tool result (PostToolUse), or is a Stop
    hook's feedback as a new user message; `updated_input` replaces a tool call's arguments.
    """

    kind: Literal["hook_ran"] = "hook_ran"
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


Event = Annotated[
    TurnStarted
    | AgentCalled
    | AgentReturned
    | TurnFinished
    | RunResumed
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
    | HookRan,
    Field(discriminator="kind"),
]

CREATION_KINDS = frozenset({"turn_started", "agent_called"})
TERMINAL_KINDS = frozenset({"turn_finished", "agent_returned"})
SESSION_KINDS = frozenset({"mode_changed"})
"""Events of the session rather than of a run: no `run_id` or `call_id`, stored at any time."""


@cache
def _adapter() -> TypeAdapter[Event]:
    return TypeAdapter(Event)


def event_from_json(data: str | bytes) -> Event:
    """Parse one event from its JSON form (the log and `stream-json` use this form)."""
    return _adapter().validate_json(data)


def event_from_dict(data: dict[str, Any]) -> Event:
    return _adapter().validate_python(data)


def event_to_json(event: _Event) -> str:
    return event.model_dump_json()
