"""Ops: what front ends ask the runtime to do (`runtime.submit(op)`).

Each op's docstring names the events that answer it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

from moot.protocol.messages import Attachment, plain_value
from moot.protocol.modes import ModeName


class _Op(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"):
    """An op; JSON tells the kinds apart by `kind` (see `op_from_json`)."""

    @property
    def kind(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]


class UserTurn(_Op, tag="user_turn", frozen=True):
    """The person says something to an agent.

    Answered by `turn_started`, the run's events, then `turn_finished`.
    """

    text: str
    attachments: tuple[Attachment, ...] = ()
    agent: str | None = None
    """The agent to address; the runtime's first agent when None."""
    model: str | None = None
    """A model for this turn only (a custom command's `model`); None: the agent's own. One
    that cannot be used is answered by `op_refused` and no turn starts."""
    agents: tuple[str, ...] = ()
    """Several agents get the message at once, each in its own call under the person's
    (`turn_started.starting_agents`); the turn's output is their results, tagged
    `[name]...[/name]`. Empty: `agent` alone."""


class ResumeRun(_Op, tag="resume_run", frozen=True):
    """Finish the session's interrupted run from where its log ends.

    Answered by `run_resumed`, `tool_finished(interrupted=True)` for each tool that started
    without a result, the run's further events, then `turn_finished`.
    """


class Interrupt(_Op, tag="interrupt", frozen=True):
    """Cancel the running turn (or compaction) and the tools the person runs.

    Answered by `tool_finished(interrupted=True)` for running tools, `agent_returned` for open
    peer calls and `turn_finished` with state cancelled / stop reason user_cancelled; by
    `run_tools_interrupted` naming the person's tool calls (`RunTool`) it stopped, each of
    which still ends with its own `tool_ran` (interrupted); by `op_refused` when nothing runs.
    """


class Approve(_Op, tag="approve", frozen=True):
    """Allow a tool call that waits on `approval_requested`. Answered by `approval_decided`, or
    by `op_refused` when no such call waits.

    `scope` "session" keeps an allow rule for the rest of the session; "always" also saves it
    to `.moot/settings.local.json`. The rule is `rule`, or the request's first suggestion.
    `mode` also switches the session's permission mode (answered by `mode_changed`): approving
    a plan (`exit_plan_mode`) leaves plan mode for `mode`, or for "default" when it is None.
    """

    tool_call_id: str
    call_id: str = ""
    """The agent call the tool call waits in (the `approval_requested` event's `call_id`); tool
    call ids are unique only within one agent call. Empty: the one waiting call with that id."""
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    mode: ModeName | None = None
    updated_input: dict[str, Any] | None = None
    """Run the call with these arguments instead of the model's (an Agent SDK's permission
    callback may change them). The policy decides again on them: what a rule denies stays
    refused."""


class Deny(_Op, tag="deny", frozen=True):
    """Refuse a tool call that waits on `approval_requested`; the model sees the feedback.

    Answered by `approval_decided` (approved false), or by `op_refused` when no such call waits.
    """

    tool_call_id: str
    call_id: str = ""
    """As in `Approve`."""
    feedback: str = ""


class SetMode(_Op, tag="set_mode", frozen=True):
    """Switch the session's permission mode; the next tool call is decided under it.

    Answered by `mode_changed`, or by `op_refused` when the session is in that mode already or
    has no modes; later tool calls are decided under the new mode.
    """

    mode: ModeName


class SetModel(_Op, tag="set_model", frozen=True):
    """Switch an agent's model, from its next turn on (a turn that runs keeps its model).

    Answered by `model_changed`, or by `op_refused` when the agent has that model already, the
    model cannot be used (the reason says why and what would: an unknown provider lists the
    known ones, a missing key names its variable), there is no such agent, or a turn is
    running. The model belongs to the session: a resumed session keeps the last
    one it switched to unless the front end names another.
    """

    model: str
    """`provider/model` (or `scripted:<file>`, or a comma-separated fallback list)."""
    agent: str | None = None
    """The agent to switch; the one that answers the person when None."""


class RunTool(_Op, tag="run_tool", frozen=True):
    """The person runs a tool of the session directly (`/grep`, `!command`); no model sees it.

    Answered by `tool_ran` with the result, or by `op_refused` when the session has no such
    tool or a deny rule forbids the call. The tools are the model's own (`SessionStatus.tools`,
    with the same workspace bounds, sandbox and hidden files) and the person's
    (`SessionStatus.person_tools`: undo, doctor, sandbox, outline, jobs, permission_rule).
    No approval is asked (the person typed the call, so they would be the one asked), and no
    hook runs; deny rules still hold, as the one decision's deny step settles them. An
    `Interrupt` stops a tool that runs (its `tool_ran` says so).
    """

    tool: str
    arguments: dict[str, Any] = {}


class RunCommand(_Op, tag="run_command", frozen=True):
    """Run `/name arguments`: a skill the person may start, a custom command from
    `.moot/commands/`, or moot's own `/init` (`SessionStatus.instructions.commands` lists them).

    The session expands it into a prompt (the skill's instructions, the command's text with
    `$ARGUMENTS` and `@file`s filled in) and runs it as a `UserTurn` would. Answered by
    `turn_started` (whose prompt is the expansion), the run's events, then `turn_finished`; or
    by `op_refused` when the session has no such command (or reads none from files), or cannot
    start the turn now (as a `UserTurn`: busy, a model that cannot be used). What the skill or
    command lists in `allowed-tools` runs without asking until that turn ends.
    """

    name: str
    """Without the slash."""
    arguments: str = ""
    agent: str | None = None
    """As in `UserTurn`."""


class NoteToMemory(_Op, tag="note_to_memory", frozen=True):
    """Add a note to the project's memory: a line `- text` at the end of the workspace's
    `AGENTS.md` (`CLAUDE.md` when only that exists), what a prompt starting with `#` does.

    Answered by `memory_noted` (the agents read the note from their next model request on), or
    by `op_refused` saying why nothing was written.
    """

    text: str


class Rename(_Op, tag="rename", frozen=True):
    """Give the session a title (`/rename`). Answered by `session_renamed`, or by
    `op_refused` for an empty title."""

    title: str


class Compact(_Op, tag="compact", frozen=True):
    """Summarise the older part of an agent's conversation with the person, keeping recent
    turns verbatim (`/compact`). Only between runs. Answered by `history_compacted`, or by
    `op_refused` (a run is going on, nothing to compact)."""

    focus: str = ""
    """What the summary should keep above all."""
    agent: str | None = None
    """Whose conversation; the session's first agent when None."""


class SendMessage(_Op, tag="send_message", frozen=True):
    """The person sends a message to a running agent: `to` is its task id (a call id) or an
    agent's name (its latest running call). Answered by `message_sent` (the agent reads it at
    its next step), or by `op_refused` when no such agent runs."""

    to: str
    text: str


class CancelAgent(_Op, tag="cancel_agent", frozen=True):
    """Cancel one running peer call (a background agent or a callee its caller waits for) and
    everything it started (its subtree); its caller reads that it was cancelled and the rest of
    the run goes on (the person's own turn: `Interrupt`). Answered by the ends of the subtree
    it cancels, innermost first, each carrying its submission id: `tool_finished(interrupted=
    True)` for a running tool, `agent_returned` (cancelled) for each call; or by `op_refused`
    (no such peer call runs, or it ended before the cancel landed)."""

    task_id: str


class RestoreFiles(_Op, tag="restore_files", frozen=True):
    """Put the files this session's tools changed back as they were before run `run_id` (the
    person's turn), undoing it and every later run, newest first: byte-exact from the
    snapshots, files created since removed. Of what shell commands changed, only the files
    their command lines write (`> F`, `tee F`, `rm F`, ...) are tracked. The conversation is
    untouched (`/rewind` goes on in a fork for that: `SessionAdmin.fork`).

    Answered by `files_restored` (what was put back, and what could not be), or by
    `op_refused` (a turn is running, no such run, the session keeps no snapshots).
    """

    run_id: str


class ApproveMcpServer(_Op, tag="approve_mcp_server", frozen=True):
    """Approve a repository's MCP server for this workspace (remembered) and start it
    (`/mcp approve NAME`).

    Answered by `mcp_server_approved`, or by `op_refused` (no such server, it needs no
    approval, the session has no MCP servers).
    """

    name: str


class RestartMcpServer(_Op, tag="restart_mcp_server", frozen=True):
    """Restart one of the session's MCP servers now (a failed one is otherwise restarted at its
    next use; `/mcp restart NAME`).

    Answered by `mcp_server_restarted`, or by `op_refused` (no such server, one that may not
    start: not approved, turned off, defined wrong; the session has no MCP servers).
    """

    name: str


class AnswerNetworkAccess(_Op, tag="answer_network_access", frozen=True):
    """Answer a `network_access_requested`: a sandboxed command's connection to a host on
    neither `sandbox.network` list. "session" lets the host through for the rest of the
    session, "always" also writes it into `.moot/settings.local.json`.

    Answered by `network_access_decided`, or by `op_refused` (no such question waits).
    """

    request_id: str
    approved: bool
    scope: Literal["once", "session", "always"] = "once"


class AnswerMcpQuestion(_Op, tag="answer_mcp_question", frozen=True):
    """Answer an MCP server's question (`mcp_question_asked`): `accept` with what was filled
    in (`content`, fitting the question's schema), `decline`, or `cancel`.

    Answered by `mcp_question_answered`, or by `op_refused` when no such question waits.
    """

    ask_id: str
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class Shutdown(_Op, tag="shutdown", frozen=True):
    """Interrupt whatever runs, then close the event stream (`events()` ends)."""


Op = (
    UserTurn
    | ResumeRun
    | Interrupt
    | Approve
    | Deny
    | SetMode
    | SetModel
    | Rename
    | RunTool
    | Shutdown
    | RunCommand
    | NoteToMemory
    | Compact
    | SendMessage
    | CancelAgent
    | RestoreFiles
    | ApproveMcpServer
    | RestartMcpServer
    | AnswerNetworkAccess
    | AnswerMcpQuestion
)
OpT = TypeVar("OpT", bound=_Op)


def checked(op: OpT) -> OpT:
    """`op` once its fields are known to hold their declared types, as `op_from_json` would
    check them: ops are not checked on construction, and a run must not start on a prompt
    that its log would refuse.

    Raises:
        ValueError: a field holds something else; the message names it.
    """
    for name in op.__struct_fields__:
        if isinstance(getattr(op, name), bytes | bytearray | memoryview):
            raise ValueError(f"{op.kind} does not fit its schema: bytes in `{name}`")
    try:
        return msgspec.convert(msgspec.to_builtins(op, enc_hook=plain_value), type(op))
    except (msgspec.ValidationError, TypeError) as exc:
        raise ValueError(f"{op.kind} does not fit its schema: {exc}") from None


def op_from_json(data: str | bytes) -> Op:
    """Parse and check one op from its JSON form, as front ends outside Python send it.

    Raises:
        msgspec.ValidationError: the JSON is not an op (names the field at fault).
    """
    return msgspec.json.decode(data, type=Op)
