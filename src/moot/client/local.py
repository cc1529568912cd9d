"""`LocalClient`: the client surface over a session this process runs.

`open_client` does what every front end needs before its first op: read the settings, check
the model and the rules, open the store, create or find the session and assemble it
(`moot.client.assemble.open_session`). Each step that can fail raises `SetupError` with a message
for the person, before anything is written, so a bad model name never leaves an empty session.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from moot.client.assemble import (
    Session,
    hook_config,
    open_session,
    session_environ,
)
from moot.client.errors import SetupError, StoreError
from moot.client.queries import StoreQueries
from moot.client.rules import session_rules
from moot.client.stored import open_queries, open_upkeep
from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.core.session import recorded_agents, recorded_model
from moot.permissions.modes import PermissionMode
from moot.permissions.rules import RuleSet
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import (
    AgentStatus,
    ContextPart,
    ContextReport,
    FilesRestored,
    InstructionFiles,
    ModelChoice,
    PermissionsReport,
    SandboxStatus,
    SessionStatus,
    Subscription,
)
from moot.protocol.editor import EditorBuffers, EditorTerminal
from moot.protocol.mcp import McpResourceText, McpServerConfig, McpServerStatus
from moot.providers.registry import UnknownModel, resolve_model
from moot.settings import LoadedSettings, Settings, SettingsError, load_settings
from moot.store.base import Store

__all__ = ["LocalClient", "SessionOptions", "open_client", "open_queries", "open_upkeep"]

AGENT = "moot"
"""The name of the agent that answers the person."""
TITLE_WAIT_S = 10.0
"""How long closing a session waits for a title its model is still writing (`modelTitles`)."""

if TYPE_CHECKING:
    from moot.client.facts import GitProbe
    from moot.skills.guidance import Guidance

INSTRUCTIONS = (
    "You are moot, a coding agent working in the person's repository. Be exact and brief; "
    "use your tools to look before you change anything."
)
"""The person's agent's instructions when the session reads no files (`read_files=False`);
otherwise they are rendered from `moot/prompts/system.md` (`moot.client.prompt`)."""


class SessionOptions(msgspec.Struct, kw_only=True):
    """What a front end chooses about the session it opens; settings fill in the rest."""

    cwd: Path
    """The workspace directory."""
    model: str | None = None
    """`provider/model`; the settings' `model` when None."""
    permission_mode: str | None = None
    """The mode to work in; None keeps a resumed session's own, or the settings' default."""
    allowed_tools: Sequence[str] = ()
    """Allow rules on top of the settings' (`--allowedTools`)."""
    disallowed_tools: Sequence[str] = ()
    """Deny rules on top of the settings' (`--disallowedTools`)."""
    session_id: str | None = None
    """Continue this session; a new one is created when None."""
    title: str = ""
    """A new session's title."""
    max_turns: int | None = None
    can_ask: bool = True
    """False where nobody answers approvals (`moot -p`): what would ask is refused."""
    auto_commit: bool | None = None
    """Commit what each turn changed as it ends; None: `MOOT_AUTO_COMMIT`, else the settings."""
    read_files: bool = True
    """Read skills, custom commands, agent definitions and memory (and render the system
    prompt around them); False gives the bare agent, for tests of other things."""
    mcp_servers: Sequence[McpServerConfig] = ()
    """MCP servers the front end brings (an editor's, over ACP), besides the files' own."""
    allow_project_mcp: Sequence[str] = ()
    """Repository MCP servers that may start without the person's approval (`*`: all)."""
    editor_buffers: EditorBuffers | None = None
    """The editor's text of files (unsaved changes included), for `read`; None: the disk."""
    editor_terminal: EditorTerminal | None = None
    """The editor's terminal, for shell commands when the person chooses it over the sandbox."""
    agents: Sequence[str] | None = None
    """The agent definitions that join as peers (`--agents`); the settings' `agents`, else all,
    when None."""


class LocalClient:
    """The `Client` protocol over a session assembled in this process."""

    def __init__(
        self,
        session: Session,
        store: Store,
        settings: Settings,
        notices: tuple[str, ...] = (),
    ) -> None:
        self._session = session
        self._runtime: Runtime = session.runtime
        self._store = store
        self._settings = settings
        self._notices = notices
        self._query = StoreQueries(store, models=settings.models, settings_env=settings.env)
        self._closed = False
        self._files: InstructionFiles | None = None

    @property
    def session_id(self) -> str:
        return self._runtime.session_id

    @property
    def query(self) -> StoreQueries:
        return self._query

    def submit(self, op: ops.Op) -> str:
        briefing = self._session.briefing
        if briefing is not None and isinstance(op, ops.RunCommand | ops.NoteToMemory):
            from moot.client.commands import note_to_memory, run_command

            op = ops.checked(op)
            if isinstance(op, ops.RunCommand):
                submission = run_command(self._runtime, briefing, op)
                self._start_mcp()
                return submission
            self._files = None  # the memory is read again
            return note_to_memory(self._runtime, briefing, op)
        submission = self._runtime.submit(op)
        self._start_mcp()  # after the op: a turn's first step goes before any server's start
        return submission

    def subscribe(self, after_seq: int | None = None) -> Subscription:
        self._start_mcp()
        return self._runtime.subscribe(after_seq)

    def _start_mcp(self) -> None:
        """Start the MCP servers in the background, the first time the session is used (inside
        the front end's event loop); nothing waits for them."""
        if self._session.mcp is not None:
            self._session.mcp.start()

    # ---- MCP (`moot.protocol.mcp.McpControl`) -------------------------------------------------

    def mcp_servers(self) -> list[McpServerStatus]:
        return self._session.mcp.statuses() if self._session.mcp is not None else []

    def approve_mcp_server(self, name: str) -> str:
        if self._session.mcp is None:
            raise KeyError(name)
        return self._session.mcp.approve(name)

    def restart_mcp_server(self, name: str) -> str:
        if self._session.mcp is None:
            raise KeyError(name)
        self._start_mcp()
        return self._session.mcp.restart(name)

    async def mcp_prompt(self, server: str, prompt: str, arguments: dict[str, str]) -> str:
        if self._session.mcp is None:
            raise LookupError("this session has no MCP servers")
        self._start_mcp()
        return await self._session.mcp.prompt(server, prompt, arguments)

    async def mcp_resource(self, server: str, uri: str) -> McpResourceText:
        if self._session.mcp is None:
            raise LookupError("this session has no MCP servers")
        self._start_mcp()
        await self._session.mcp.wait_ready(server, 30)
        return await self._session.mcp.resource(server, uri)

    def files(self, limit: int = 20_000) -> list[str]:
        from itertools import islice

        from moot.workspace.walk import walk_files  # loads at the first `@` only

        workspace = self._session.workspace
        found = walk_files(workspace.root, workspace.root, workspace.ignore())
        return ["/".join(entry.parts) for entry in islice(found, limit)]

    def status(self) -> SessionStatus:
        runtime, shell = self._runtime, self._session.shell
        agents = tuple(
            AgentStatus(a.name, a.role, a.model if isinstance(a.model, str) else a.model.name)
            for a in runtime.agents.values()
        )
        return SessionStatus(
            session_id=runtime.session_id,
            workspace=str(self._session.workspace.root),
            mode=runtime.mode,
            model=agents[0].model,
            agents=agents,
            tools=tuple(runtime.tools),
            sandbox=SandboxStatus(shell.backend, self._sandbox_reason()),
            open_run=runtime.unfinished_run,
            running=runtime.running,
            context_window=self._context_window(agents[0].model, agents[0].name),
            git_branch=_git_branch(self._session.workspace.root),
            settings=msgspec.to_builtins(self._settings),
            notices=(
                *self._notices,
                *(self._session.mcp.notices() if self._session.mcp is not None else ()),
            ),
            person_tools=tuple(runtime.person_tools),
            skills=tuple(skill.name for skill in self._instructions().skills),
            instructions=self._instructions(),
            prompt_parts=self._session.prompt_parts,
            failure=runtime.failure,
        )

    def _instructions(self) -> InstructionFiles:
        if self._files is None:
            from moot.client.commands import instruction_files

            briefing = self._session.briefing
            self._files = instruction_files(briefing) if briefing else InstructionFiles()
        return self._files

    def _sandbox_reason(self) -> str:
        """Why commands run where they do; a host chosen in a settings file (maybe the
        repository's own) names that file rather than saying "on purpose"."""
        shell, settings = self._session.shell, self._settings
        origin = getattr(settings, "origins", {}).get("sandbox")
        chosen_in_a_file = settings.sandbox == "none" and not os.environ.get("MOOT_SANDBOX")
        if shell.backend == "host" and chosen_in_a_file and origin:
            return f'"sandbox": "none" in {origin}'
        return shell.reason

    def context(self, agent: str | None = None) -> ContextReport:
        runtime = self._runtime
        chosen = runtime.agents[agent] if agent else runtime.entry
        model = chosen.model if isinstance(chosen.model, str) else chosen.model.name
        last = self._store.events(self.session_id, kinds=("usage",), limit=50)
        mine = [
            e
            for e in last
            if isinstance(e, ev.UsageRecorded) and e.agent == chosen.name and not e.parent_call_id
        ]
        usage = mine[-1].usage if mine else None
        return ContextReport(
            agent=chosen.name,
            model=model,
            parts=self._with_prompt_parts(runtime.context_parts(chosen.name)),
            context_window=self._context_window(model, chosen.name),
            last_input_tokens=(
                usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
                if usage is not None
                else None
            ),
        )

    def _with_prompt_parts(self, parts: list[ContextPart]) -> tuple[ContextPart, ...]:
        """The runtime's parts, the system prompt's own pieces (template, memory, skills index,
        roster: `SessionStatus.prompt_parts`, in bytes) listed under it as tokens."""
        pieces = [
            ContextPart(
                f"  {'template' if p.name == 'system prompt' else p.name}", p.bytes // 4, p.detail
            )
            for p in self._session.prompt_parts
            if p.name != "tool schemas"  # the runtime's `tools` part counts them
        ]
        out: list[ContextPart] = []
        for part in parts:
            out.append(part)
            if part.name == "system prompt":
                out += pieces
        return tuple(out)

    def permissions(self) -> PermissionsReport:
        rules = self._session.rules
        if rules is None:
            return PermissionsReport(mode=self._runtime.mode, rules=(), local_file="")
        return rules().report(self._runtime.mode)

    def restore_files(self, run_id: str) -> FilesRestored:
        from moot.workspace.snapshots import FileSnapshots, RestoreError

        if self.status().running:
            raise RuntimeError("a turn is running: interrupt it first")
        runs = [e.run_id for e in self._store.events(self.session_id, kinds=("turn_started",))]
        if run_id not in runs:
            raise KeyError(f"no turn {run_id!r} in session {self.session_id}")
        snapshots = FileSnapshots(self._store, self.session_id, self.status().workspace)
        restored: set[str] = set()
        failures: list[str] = []
        # Newest first: a file several runs changed ends as the earliest run found it.
        for run in reversed(runs[runs.index(run_id) :]):
            try:
                paths = snapshots.restore(run)
            except RestoreError as exc:
                paths = exc.restored
                failures += [f"{f.path}: {f.reason}" for f in exc.failures]
            restored.update(p.relative_to(snapshots.root).as_posix() for p in paths)
        return FilesRestored(restored=tuple(sorted(restored)), failures=tuple(failures))

    def fork(self, at: int | None = None) -> str:
        from moot.client.upkeep import SessionUpkeep

        return SessionUpkeep(self._store).fork(self.session_id, at)

    def models(self) -> list[ModelChoice]:
        from moot.client.models import model_choices

        in_use = [a.model for a in self._runtime.agents.values() if isinstance(a.model, str)]
        return model_choices(self._settings, in_use)

    async def save_key(self, provider: str, key: str) -> str:
        """See `protocol.client.KeyStore`: checked with the session's environment (its base
        URLs), saved where `moot login` saves."""
        from moot.client.assemble import session_environ
        from moot.providers import credentials
        from moot.providers.probe import check_key

        try:
            key = credentials.given_key(provider, key)
        except credentials.KeyRefused as exc:
            raise ValueError(str(exc)) from None
        checked = await check_key(provider, key, session_environ(self._settings))
        if checked.refused:
            raise ValueError(f"{checked.note}; nothing saved")
        path = credentials.save_given_key(provider, key)
        return f"saved the {provider} key to {path} (readable only by you); {checked.note}"

    def _context_window(self, model: str, agent: str) -> int | None:
        if model.startswith("scripted"):
            try:  # a script bounds its context only if it says so (`context_window:`)
                return self._runtime.provider_window(agent)
            except Exception:  # a script that cannot be read: its first turn will say why
                return None
        from moot.providers.catalog import lookup

        try:
            return lookup(model, self._settings.models).context_window
        except Exception:  # an odd name: the status line just shows no percentage
            return None

    async def close(self) -> None:
        """Interrupt what runs, end the subscriptions, then the session and the store. A
        session left without a turn is not kept (nothing in it to go on with)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._runtime.submit(ops.Shutdown())
            try:
                await self._runtime.wait()
            finally:
                # Also after a run the store stopped (a full disk): its commands and container
                # end all the same, before `wait` raises why.
                await self._runtime.title_written(TITLE_WAIT_S)  # `moot -p` ends after a turn
                await self._runtime.tools_done()
                await self._session.close()  # background shells, the sandbox's container
            _discard_if_empty(self._store, self.session_id)  # the runtime let its claim go
        finally:
            self._store.close()


def open_client(options: SessionOptions, *, store: Store | None = None) -> LocalClient:
    """Open a session (new, or `options.session_id`) for a front end.

    Args:
        options: The front end's choices.
        store: The store to use; the sessions database (`moot.store.open_store`) when None.
            The client closes it.

    Raises:
        SetupError: The settings, model, rules or sandbox setting are wrong, or there is no
            such session; the message says what to do. Nothing was created.
    """
    cwd = options.cwd
    git = _git_probe(cwd) if options.read_files else None  # runs while the rest is set up
    try:
        settings = load_settings(cwd)
        hooks = hook_config(settings, cwd)
    except SettingsError as exc:  # HookConfigError included
        raise SetupError(str(exc)) from None
    if options.session_id is not None and store is None and not options.model:
        store = _open_store()
    created: str | None = None
    try:
        # The model belongs to the session: a resumed one goes on with the model it last
        # switched to, unless the front end names another.
        recorded = None
        resumed = options.session_id is not None and store is not None and not options.model
        if resumed and store.session(options.session_id) is not None:  # type: ignore[union-attr,arg-type]
            recorded = recorded_model(store, options.session_id, AGENT)  # type: ignore[arg-type]
        model = options.model or recorded or settings.model
        if not model:
            raise SetupError(
                "no model: pass --model provider/model (or set MOOT_MODEL, or `model` in settings)"
            )
        try:
            # A bad name, script or missing key is a usage error, before any session exists
            # (and before a new sessions database is made).
            resolve_model(model, session_environ(settings), models=settings.models)
        except UnknownModel as exc:
            if model == recorded and not options.model:
                raise SetupError(_gone_model(model, str(exc), settings)) from None
            raise SetupError(str(exc)) from None
        if store is None:
            store = _open_store()
        if options.session_id is not None and store.session(options.session_id) is None:
            raise SetupError(f"no session {options.session_id!r}")
        rules = session_rules(settings, options.allowed_tools, options.disallowed_tools)
        # The runtime gets the name, not the provider: it resolves names itself and moves a
        # scripted provider past the turns a resumed session has already played.
        agent = Agent(AGENT, role="coding agent", instructions=INSTRUCTIONS, model=model)
        guidance = _guidance(cwd, agent.name, rules) if options.read_files else None
        told: tuple[str, ...] = ()
        if guidance is not None:
            guidance, told = _session_roster(guidance, options, settings, store)
        limits = Limits(max_turns=options.max_turns) if options.max_turns else Limits()
        if settings.auto_compact_at is not None:
            limits = msgspec.structs.replace(limits, compact_at=settings.auto_compact_at)
        session_id = options.session_id
        if session_id is None:
            session_id = created = store.create_session(title=options.title, workspace=str(cwd)).id
        mode = options.permission_mode
        session = open_session(
            store,
            session_id,
            cwd,
            settings=settings,
            agent=agent,
            rules=rules,
            mode=PermissionMode(mode) if mode else None,
            hooks=hooks,
            limits=limits,
            can_ask=options.can_ask,
            auto_commit=_auto_commit(options, settings),
            model=options.model,
            allowed_tools=options.allowed_tools,
            disallowed_tools=options.disallowed_tools,
            guidance=guidance,
            git_probe=git,
            mcp_servers=options.mcp_servers,
            allow_project_mcp=options.allow_project_mcp,
            editor_buffers=options.editor_buffers,
            editor_terminal=options.editor_terminal,
            resumed=options.session_id is not None,
        )
    except BaseException:
        if store is not None:
            if created is not None:  # nothing is left of a session that could not be opened
                with contextlib.suppress(StoreError):  # what failed first is what is told
                    _discard_if_empty(store, created)
            store.close()
        raise
    notices = (*_notices(settings, cwd), *_held_commands(session, cwd), *told)
    return LocalClient(session, store, settings, notices)


def _discard_if_empty(store: Store, session_id: str) -> None:
    """A session without a turn is not kept (`SessionUpkeep.discard_if_empty`)."""
    from moot.client.upkeep import SessionUpkeep

    SessionUpkeep(store).discard_if_empty(session_id)


def _gone_model(model: str, why: str, settings: Settings) -> str:
    """A resumed session's own model cannot be used any more: say so, with the choices."""
    from moot.client.models import model_choices

    ready = [c.name for c in model_choices(settings) if c.ready][:CHOICES_SHOWN]
    choices = ", ".join(ready) if ready else "none is ready here (moot doctor says why)"
    return (
        f"this session's model {model} cannot be used any more ({why}); resume it with "
        f"--model naming another: {choices}"
    )


CHOICES_SHOWN = 12


def _open_store() -> Store:
    from moot.store import open_store

    return open_store()


def _notices(settings: LoadedSettings, cwd: Path) -> tuple[str, ...]:
    """What the person should be told as the session opens: settings keys moot ignores (with
    the nearest it reads), and each project file whose grants wait for their approval
    (`moot.settings_review`)."""
    return (*(str(warning) for warning in settings.warnings), *(str(h) for h in settings.held))


def _held_commands(session: Session, cwd: Path) -> tuple[str, ...]:
    """The repository's skills and commands whose `allowed-tools` wait for the person."""
    if session.briefing is None:
        return ()
    from moot.client.trust import held_commands

    return tuple(str(h) for h in held_commands(cwd, guidance=session.briefing.guidance))


def _git_branch(root: Path) -> str:
    """The branch HEAD names, read from `.git/HEAD` (no git process: the status line asks often)."""
    try:
        head = (root / ".git" / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""


def _git_probe(cwd: Path) -> GitProbe | None:
    from moot.client.facts import GitProbe

    try:
        return GitProbe(Path(os.path.realpath(cwd)))
    except RuntimeError:  # no thread could be started: the prompt runs git itself
        return None


def _session_roster(
    guidance: Guidance, options: SessionOptions, settings: Settings, store: Store
) -> tuple[Guidance, tuple[str, ...]]:
    """The agent definitions that join the session, and what to tell the person about them.

    The agents belong to the session, as its model and mode do: a resumed one goes on with
    those it last ran with (`recorded_agents`) unless the front end names others
    (`--agents`); a new one takes the settings' `agents`, else every definition. A recorded
    agent whose definition is gone does not join, and the person is told.

    Raises:
        SetupError: The front end or the settings name an agent no definition has.
    """
    if options.agents is not None:
        return _with_roster(guidance, options.agents), ()
    recorded = recorded_agents(store, options.session_id) if options.session_id else None
    if recorded is None:
        roster = settings.agents
        return (guidance if roster is None else _with_roster(guidance, roster)), ()
    peers = [name for name in recorded if name != AGENT]
    gone = [name for name in peers if name not in guidance.agents]
    kept = _with_roster(guidance, [name for name in peers if name in guidance.agents])
    if not gone:
        return kept, ()
    there = ", ".join(sorted(guidance.agents)) or "none"
    return kept, (
        f"this session's agents {', '.join(gone)} have no definition any more and did not "
        f"join (--agents names others; there are: {there})",
    )


def _with_roster(guidance: Guidance, roster: Sequence[str]) -> Guidance:
    """Only the agent definitions `roster` names join the session.

    Raises:
        SetupError: It names an agent no definition has; the message lists those there are.
    """
    if unknown := sorted(set(roster) - set(guidance.agents)):
        there = ", ".join(sorted(guidance.agents)) or "none"
        raise SetupError(f"no agent definition {', '.join(unknown)} (there are: {there})")
    chosen = {name: d for name, d in guidance.agents.items() if name in roster}
    return msgspec.structs.replace(guidance, agents=chosen)


def _guidance(cwd: Path, agent: str, rules: RuleSet) -> Guidance:
    from moot.paths import config_dir
    from moot.skills.guidance import load_guidance

    denied = read_denied_paths(rules, cwd)
    return load_guidance(cwd, config_dir(), agent_names={agent}, denied=denied)


def read_denied_paths(rules: RuleSet, root: Path) -> Callable[[Path], bool] | None:
    """What `Read(...)` deny rules cover, as a test of real paths (a bare `Read` covers every
    file): nothing they cover is read into the session from skills, commands or memory."""
    denied = [rule for rule in rules.deny if rule.covers("read")]
    if not denied:
        return None
    base = os.path.realpath(root)

    def covers(path: Path) -> bool:
        return any(r.path is None or r.path.matches(str(path), base) for r in denied)

    return covers


def _auto_commit(options: SessionOptions, settings: Settings) -> bool:
    if options.auto_commit is not None:
        return options.auto_commit
    return bool(os.environ.get("MOOT_AUTO_COMMIT") or settings.auto_commit)
