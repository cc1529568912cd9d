"""The client surface: the one thing every front end holds (the app, the REPL, ACP, `moot -p`).

A front end changes its session only through `Client.submit(op)`, reads events through a
`Subscription` that may start at any `seq` (a replay from the store, then live, with no gap or
duplicate at the seam), and reads everything else through read-only queries (`Queries`,
`Client.status`). What is no op, because it changes something besides the session's log (a
fork creates another session; the person's key for a provider never enters a log), is the one
admin protocol, `SessionAdmin`. The values the queries answer with live here, beside the
protocols, so a front end needs nothing below this package to use them.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import msgspec

if TYPE_CHECKING:
    # Annotations only: `moot sessions list` reads this module and needs no event class.
    from moot.protocol.events import Event
    from moot.protocol.ops import Op
    from moot.protocol.subscription import Subscription

# ---- what the queries answer ------------------------------------------------------------------


class SessionSummary(msgspec.Struct, frozen=True):
    """One session as a list of sessions shows it."""

    id: str
    title: str
    """A short name people recognise the session by; may be empty."""
    workspace: str
    """The directory the session works in."""
    created_at: datetime
    updated_at: datetime
    """The time of its last event (UTC)."""
    turns: int
    """The person's turns (runs) it holds, finished or not."""
    cost_usd: float
    """What its finished runs cost, from the model catalog's prices."""
    state: str | None
    """`running` while a run is open, else how the last run ended; None before the first."""
    event_count: int
    tokens: int = 0
    """Tokens its finished runs read and wrote (input and output, peers included)."""


class CostLine(msgspec.Struct, frozen=True):
    """What one model cost in one session: the cost ledger's row (`Queries.costs`)."""

    session_id: str
    model: str
    """`provider/model`, as the usage was recorded."""
    calls: int
    """Model calls that reported usage (summaries for compaction included)."""
    input_tokens: int = 0
    """Uncached input tokens."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    """From the catalog's prices per million tokens; where the catalog has none, what the
    provider reported itself; None when neither knows."""


class AgentStatus(msgspec.Struct, frozen=True):
    """An agent of the session, as front ends list it."""

    name: str
    role: str
    model: str
    """`provider/model`, or the class name of a provider given as an object."""


class SandboxStatus(msgspec.Struct, frozen=True):
    """Where the session's shell commands run."""

    backend: str
    """`bubblewrap`, `docker`, `host` or `none` (shell commands refused)."""
    reason: str
    """Why this backend, or why there is none."""


class PromptPart(msgspec.Struct, frozen=True):
    """One part of what every model request carries, and its size in bytes (`/context`)."""

    name: str
    """`system prompt`, `skills section`, `memory`, `skills index`, `tool schemas`, ..."""
    bytes: int
    """Its size in bytes (UTF-8)."""
    detail: str = ""
    """What else to know: how much of a budget it uses, what was cut or left out."""


class SkillInfo(msgspec.Struct, frozen=True):
    """A skill of the session (`/skills`)."""

    name: str
    description: str
    source: str
    """`project`, `user` or `shipped`."""
    path: str
    """Its `SKILL.md`."""
    model_invocable: bool = True
    user_invocable: bool = True
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()


class CommandInfo(msgspec.Struct, frozen=True):
    """A `/name` from files the person may type: a skill, a custom command, or moot's own
    (`init`). Submit `RunCommand(name, arguments)` to run it."""

    name: str
    description: str
    kind: str
    """`skill`, `command` or `moot`."""
    argument_hint: str = ""
    path: str = ""


class MemoryInfo(msgspec.Struct, frozen=True):
    """A file the session's memory holds (`/memory`)."""

    path: str
    source: str
    """`project` or `user`."""
    bytes: int
    imported_by: str = ""


class AgentFileInfo(msgspec.Struct, frozen=True):
    """An agent of the session that a file defined (`/agents`)."""

    name: str
    path: str
    source: str
    tools: tuple[str, ...] | None = None
    """What it is limited to; None: every tool."""


class FileProblem(msgspec.Struct, frozen=True):
    """Something wrong with a skill, command, agent or memory file: an error left it out."""

    path: str
    message: str
    severity: str = "error"


class InstructionFiles(msgspec.Struct, frozen=True):
    """What the session learned from files as it opened: skills, custom commands, agent
    definitions and memory, and what was wrong with any of them."""

    skills: tuple[SkillInfo, ...] = ()
    commands: tuple[CommandInfo, ...] = ()
    agents: tuple[AgentFileInfo, ...] = ()
    memory: tuple[MemoryInfo, ...] = ()
    memory_notes: tuple[str, ...] = ()
    """What was cut from the memory or not read, and why."""
    problems: tuple[FileProblem, ...] = ()
    skills_listed: tuple[str, ...] = ()
    """Skills the model sees in the `skill` tool's index."""
    skills_left_out: tuple[str, ...] = ()
    """Skills the index's budget left out (the model may still load them by name)."""


class WorkspaceFiles(msgspec.Struct, frozen=True):
    """The workspace's files for `@path` completion (`Client.files`)."""

    paths: tuple[str, ...] = ()
    """Every file no ignore rule and no `Read(...)` deny rule hides, relative to the workspace
    and `/`-joined, sorted."""
    notes: tuple[str, ...] = ()
    """What the listing left out and why (a directory too deep to enter, the time limit);
    empty when `paths` is every file."""


class SessionStatus(msgspec.Struct, frozen=True):
    """A session's current state, as a status line or `/status` shows it."""

    session_id: str
    workspace: str
    mode: str | None
    """The permission mode (None: the session has no modes)."""
    model: str
    """The model of the agent that answers the person."""
    agents: tuple[AgentStatus, ...]
    tools: tuple[str, ...]
    """The tools the agents are offered (besides `call_agent` and `finish`)."""
    sandbox: SandboxStatus
    open_run: str | None
    """The run a crash or stop left unfinished (resume it with `ResumeRun`), if any."""
    running: bool
    """A turn is running now."""
    skills: tuple[str, ...] = ()
    context_window: int | None = None
    """The answering model's context window in tokens, from the catalog (None: unknown)."""
    git_branch: str = ""
    """The workspace's current git branch (empty: not a repository, or a detached HEAD)."""
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    """The merged settings in force, in their JSON form."""
    notices: tuple[str, ...] = ()
    """What the person should be told once (a settings key nobody reads, a repository's own
    settings that loosen the sandbox)."""
    person_tools: tuple[str, ...] = ()
    """The tools only the person runs (`RunTool`), never offered to a model."""
    instructions: InstructionFiles = msgspec.field(default_factory=InstructionFiles)
    """Skills, custom commands, agent definitions and memory, as read when the session opened."""
    prompt_parts: tuple[PromptPart, ...] = ()
    """What every model request of the person's agent carries, part by part (`/context`)."""
    added_dirs: tuple[str, ...] = ()
    """Directories besides the workspace the file tools read and write (`--add-dir`), real
    paths: roots an MCP client may be told of."""
    failure: str = ""
    """Why the last run stopped without recording its end (the sessions database could not
    be written: a full disk), which also ended every subscription; "" when none did. What was
    stored stays; `ResumeRun` goes on once the store can be written again."""


class ContextPart(msgspec.Struct, frozen=True):
    """One part of what an agent's model reads with each request."""

    name: str
    """`system prompt`, `memory`, `tools`, `messages`, `files` ..."""
    tokens: int
    """Estimated (about four characters a token; the APIs count exactly only when billing)."""
    detail: str = ""


class ContextReport(msgspec.Struct, frozen=True):
    """What fills an agent's context now (`/context`)."""

    agent: str
    model: str
    parts: tuple[ContextPart, ...]
    context_window: int | None = None
    """The model's window in tokens, from the catalog (None: unknown)."""
    last_input_tokens: int | None = None
    """What the provider counted for the agent's last request (None: no request yet)."""

    @property
    def tokens(self) -> int:
        """The estimated total."""
        return sum(part.tokens for part in self.parts)


class RuleEntry(msgspec.Struct, frozen=True):
    """One permission rule in force, and where it comes from."""

    kind: Literal["allow", "ask", "deny"]
    rule: str
    source: str
    """A settings file's path, `command line`, or `this session` (an approval for it)."""


class PermissionsReport(msgspec.Struct, frozen=True):
    """The effective permission rules (`/permissions`), each with its source."""

    mode: str | None
    rules: tuple[RuleEntry, ...]
    local_file: str
    """Where `permission_rule` adds and removes rules (`.moot/settings.local.json`)."""


class ModelChoice(msgspec.Struct, frozen=True):
    """A model the catalog knows, as a picker lists it."""

    name: str
    """`provider/model`."""
    ready: bool
    """Its provider has a key (or needs none), so `SetModel` would take it."""
    context_window: int | None = None
    note: str = ""
    """Why it is not ready (the variable to set), or other facts worth a glance."""
    needs_key: str | None = None
    """The provider whose key it lacks (`SessionAdmin.save_key` can save one), when that is
    why."""


# ---- the protocols ------------------------------------------------------------------------------


class Queries(Protocol):
    """Read-only questions about the stored sessions; answering changes nothing."""

    def sessions(self, *, workspace: str | None = None, limit: int = 50) -> list[SessionSummary]:
        """Sessions, most recently updated first; only those of `workspace` when given."""
        ...

    def session(self, session_id: str) -> SessionSummary | None:
        """One session, or None when the store holds no such session."""
        ...

    def events(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        before_seq: int | None = None,
        kinds: Collection[str] | None = None,
        limit: int | None = None,
        run_id: str | None = None,
    ) -> list[Event]:
        """A session's stored events in seq order: after `after_seq`, before `before_seq`, of
        `kinds`, of one run (`run_id`); with `limit`, the *last* `limit` of those (a transcript
        shows its tail first, older pages on demand).

        Raises:
            KeyError: The store holds no such session.
        """
        ...

    def costs(
        self,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        workspace: str | None = None,
    ) -> list[CostLine]:
        """The cost ledger: one line per session and model, from usage recorded at or after
        `since` (every session's, or `session_id`'s, or `workspace`'s), newest session first.

        Raises:
            KeyError: `session_id` names no stored session.
        """
        ...

    def export(self, session_id: str, kind: str = "md") -> str:
        """A session as a transcript: `md` (readable), `json` (its events) or `html` (one
        self-contained page), with every API key moot knows of blanked wherever it shows up
        (keys never enter the log by moot's doing, but a tool may read one from a file, or
        the person paste one).

        Raises:
            KeyError: The store holds no such session.
            ValueError: `kind` is none of md, json, html.
        """
        ...


class Client(Protocol):
    """One session, as a front end sees it: ops in, events out, read-only queries."""

    @property
    def session_id(self) -> str: ...

    @property
    def query(self) -> Queries:
        """Read-only questions about this store's sessions."""
        ...

    def submit(self, op: Op) -> str:
        """Hand the session an op; returns its submission id, which every event that answers
        the op carries (`Event.submission_id`). An op the session cannot take now (a turn
        while one runs, an interrupt with nothing running, an answer nothing waits for) is
        answered by `op_refused`, never by an exception.

        Raises:
            ValueError: The op does not fit its schema; nothing happened.
            StoreError: (`moot.client.errors`) The sessions database cannot be written (a full
                disk), so nothing could be recorded; nothing happened.
        """
        ...

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        """The session's events: with `after_seq`, those stored after it and then live ones;
        without, live ones from now on."""
        ...

    def status(self) -> SessionStatus:
        """The session's mode, model, agents, tools, sandbox and run state now."""
        ...

    def files(self) -> WorkspaceFiles:
        """Every file of the workspace, gitignore-aware and without what deny rules hide (for
        `@path` completion). Blocking: the first call lists the workspace (about 0.5 s for
        100,000 files), later ones only what changed since (~15 ms); call it off the UI thread."""
        ...

    def context(self, agent: str | None = None) -> ContextReport:
        """What fills an agent's context now (the person's agent when None), part by part."""
        ...

    def permissions(self) -> PermissionsReport:
        """The permission rules in force and where each comes from (change them with the
        `permission_rule` person tool)."""
        ...

    def models(self) -> list[ModelChoice]:
        """The models a `SetModel` may name: the catalog's (with the settings' and the user's
        entries) and the ones in use, the ready ones first."""
        ...

    async def close(self) -> None:
        """Interrupt what runs, end every subscription and release what the session holds."""
        ...


@runtime_checkable
class SessionAdmin(Protocol):
    """The one way a front end changes what is not its session's log, so no op can: a client
    offers it when it can (`isinstance(client, SessionAdmin)`). Everything else that changes a
    session is an op (`Client.submit`)."""

    def fork(self, at: int | None = None) -> str:
        """A new stored session sharing this one's history up to event `at` (all of it when
        None; a run not finished by then is left out), which records `session_forked`; its id.
        This session goes on as it was.

        Raises:
            KeyError: `at` is not one of this session's events, or falls inside a run (the
                message names the seqs that would work).
        """
        ...

    async def save_key(self, provider: str, key: str) -> str:
        """Try `key` with one tiny request to `provider`, then save it (mode 0600) where `moot
        login` saves unless the provider refused it; what was done, in a line that never holds
        the key. The key never enters a session's log.

        Raises:
            ValueError: The provider refused the key, or takes none, or the key is unusable
                (nothing is saved).
        """
        ...
