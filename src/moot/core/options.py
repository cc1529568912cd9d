"""`RuntimeOptions`: what a `Runtime` is made with, besides its agents and its store.

    Runtime(agents, store=store, options=RuntimeOptions(tools=[...], limits=Limits(...)))

The settings every run reads (the gate, the hooks, the turn end and how the agents work
together) are `RunSettings` (`core/run.py`), which `RuntimeOptions` extends, so a run reads the
runtime's options as they are. Each field says its default.

The ops that reach beyond the log answer through seams a session layer fills in: the commands
and memory its files hold (`SessionCommands`: `RunCommand`, `NoteToMemory`), the snapshots of
its files (`Snapshots`: `RestoreFiles`), its MCP servers (`McpServers`:
`ApproveMcpServer`, `RestartMcpServer`) and its network questions (`NetworkQuestions`:
`AnswerNetworkAccess`). The runtime answers each op itself, with the same
checks as any other (its schema, one submission counter, nothing after `Shutdown`); a session
without the seam refuses the op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import msgspec

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.run import RunSettings
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import AttachedFile
from moot.protocol.modes import ModeName
from moot.providers.base import Provider
from moot.providers.registry import resolve_model
from moot.tools.base import Tool

Refusal = Callable[[str], "str | None"]
"""Given a path, why the person may not read it (a deny rule), or None."""


class AttachFiles(Protocol):
    """Reads the files a prompt names as `@path` (the session's workspace, its bounds and
    caps); `refused` says which a deny rule keeps from being read."""

    def __call__(self, prompt: str, refused: Refusal) -> Sequence[AttachedFile]: ...


class CommandTurn(msgspec.Struct, frozen=True):
    """What `/name arguments` (`RunCommand`) becomes: the prompt of the turn it starts, and
    what it pre-approves for that turn."""

    prompt: str
    model: str = ""
    """The model the turn answers with (a command's `model`); empty: the agent's own."""
    allowed_tools: tuple[str, ...] = ()
    """Permission rules that run without asking until the turn ends (`SessionCommands.grant`)."""
    by: str = ""
    """What grants them, for the person (`skill code-review`, `command /review`)."""


class MemoryNote(msgspec.Struct, frozen=True):
    """A note written to the project's memory (`NoteToMemory`)."""

    path: str
    """The memory file written."""
    note: str
    """The note as written (one line)."""
    agents: tuple[Agent, ...]
    """The session's agents with their instructions rendered again around the new memory."""


class SessionCommands(Protocol):
    """The commands and memory a session's files hold (`RunCommand`, `NoteToMemory`)."""

    def expand(self, op: ops.RunCommand) -> CommandTurn | str:
        """The turn `/name arguments` makes, or why there is none (the session has no such
        command; the message lists those there are)."""
        ...

    def grant(self, agent: str, turn: CommandTurn) -> None:
        """Let `agent` run what `turn` pre-approves without asking, until the turn ends (once
        the turn is accepted)."""
        ...

    def note(self, text: str, agents: Sequence[Agent]) -> MemoryNote | str:
        """Add `text` to the project's memory; the note, with `agents` renewed around the new
        memory; or why nothing was written."""
        ...


class Snapshots(Protocol):
    """The snapshots a session's tools took of the files they changed (`RestoreFiles`;
    `moot.workspace.snapshots.FileSnapshots`)."""

    def restore_runs(self, runs: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Put back the files each of `runs` changed, in the order given (newest first, so a
        file several runs changed ends as the earliest found it): the workspace-relative paths
        written back or removed, and `path: reason` for each that could not be."""
        ...


class McpQuestions(Protocol):
    """The servers' questions waiting for the person (`mcp_question_asked`)."""

    def answer(self, ask_id: str, action: str, content: dict[str, Any] | None) -> str:
        """Send the person's answer to the server that asked; returns that server's name.

        Raises:
            KeyError: No such question waits.
        """
        ...


class McpServers(Protocol):
    """A session's MCP servers, as the ops that change them reach them."""

    @property
    def questions(self) -> McpQuestions:
        """Their questions to the person (`AnswerMcpQuestion` answers them)."""
        ...

    def approve(self, name: str) -> str:
        """Approve a repository's server here (remembered) and start it; what was done.

        Raises:
            KeyError: No such server.
            ValueError: It needs no approval (the message says why).
        """
        ...

    def restart(self, name: str) -> str:
        """Restart a server now; what was done.

        Raises:
            KeyError: No such server.
            ValueError: It may not start (not approved, turned off, defined wrong).
        """
        ...


class NetworkQuestions(Protocol):
    """The session's questions about hosts its sandboxed commands connect to
    (`network_access_requested`), as `AnswerNetworkAccess` reaches them."""

    def answer(self, request_id: str, approved: bool, scope: str) -> tuple[str, str]:
        """Let the waiting connection go on or refuse it; (its host, what was kept).

        Raises:
            KeyError: No such question waits.
        """
        ...


class RuntimeOptions(RunSettings, frozen=True, kw_only=True):
    """How a session's runtime works: its tools, limits and policies, and (from
    `RunSettings`) its gate, hooks, turn end and peers. Every field has a default, so
    `RuntimeOptions()` is a runtime with no tools, the default limits, everything allowed."""

    tools: Sequence[Tool] = ()
    """Tools every agent has; none by default."""
    limits: Limits | None = None
    """Bounds for each new run; None (the default): `Limits()`."""
    approval: ApprovalPolicy | None = None
    """Settles tool approvals; None (the default): `AllowAll`, until permission rules exist."""
    mode: ModeName | None = None
    """The permission mode of a session that never switched (`mode_changed`); a resumed
    session keeps its own. None (the default): the approval policy's `default_mode`
    (`HasModes`), or no modes at all (`SetMode` is refused)."""
    person_tools: Mapping[str, Tool] | None = None
    """Tools only the person runs (`RunTool`), besides `tools`; never offered to a model.
    None (the default): none."""
    attach: AttachFiles | None = None
    """Reads the files a turn's prompt names as `@path` into its `turn_started`; None (the
    default) attaches nothing."""
    resolve: Callable[[str], Provider] = resolve_model
    """Makes an agent's model name (`provider/model`) a provider; by default `resolve_model`
    with the process environment (keys, base URLs)."""
    title: str = ""
    """The title of a session the runtime creates (no `session_id`); none by default."""
    workspace: str = ""
    """The workspace a session the runtime creates belongs to; none by default."""
    model_titles: bool = False
    """After the session's first turn, ask its first agent's model once for a title
    (`moot.core.titling`), recorded as `session_renamed`; off (the default): no model call
    names a session."""
    commands: SessionCommands | None = None
    """The commands and memory the session's files hold (`RunCommand`, `NoteToMemory`); None
    (the default): the session reads none, and refuses both."""
    snapshots: Snapshots | None = None
    """The snapshots of the files the session's tools changed (`RestoreFiles`); None (the
    default): the session keeps none, and refuses to restore."""
    mcp: McpServers | None = None
    """The session's MCP servers (`ApproveMcpServer`, `RestartMcpServer`); None (the
    default): it has none, and refuses both."""
    network: NetworkQuestions | None = None
    """The questions about hosts sandboxed commands connect to (`AnswerNetworkAccess`); None
    (the default): nobody is asked, and the op is refused."""


def check(agents: Sequence[Agent], options: RuntimeOptions) -> None:
    """Refuse a runtime that could not work, before it touches the store.

    Raises:
        ValueError: No agents, two of one name, `finish` disabled, an unknown `extra_scope`,
            or a person tool named like a tool of the model's.
    """
    if not agents:
        raise ValueError("a runtime needs at least one agent")
    if "finish" in options.disabled_tools:
        raise ValueError("finish cannot be disabled; give a tool named finish to replace it")
    if options.extra_scope not in ("entry", "all"):
        raise ValueError(f"extra_scope must be 'entry' or 'all', not {options.extra_scope!r}")
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"agent names must be unique: {names}")
    tools = {t.name for t in options.tools}
    if both := set(options.person_tools or {}) & tools:
        raise ValueError(f"person tools named like the model's tools: {sorted(both)}")
