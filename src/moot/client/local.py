"""`LocalClient`: the client surface over a session this process runs.

`open_client` does what every front end needs before its first op: read the settings, check
the model and the rules, open the store, create or find the session and assemble it
(`moot.client.assemble.open_session`). Each step that can fail raises `SetupError` with a message
for the person, before anything is written, so a bad model name never leaves an empty session.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from moot.client.assemble import (
    Session,
    hook_config,
    open_session,
    session_environ,
    session_rules,
)
from moot.client.errors import SetupError
from moot.client.queries import StoreQueries
from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.permissions.modes import PermissionMode
from moot.protocol import ops
from moot.protocol.client import AgentStatus, SandboxStatus, SessionStatus, Subscription
from moot.protocol.editor import EditorBuffers, EditorTerminal
from moot.protocol.mcp import McpResourceText, McpServerConfig, McpServerStatus
from moot.providers.registry import UnknownModel, resolve_model
from moot.settings import Settings, SettingsError, load_settings
from moot.store.base import Store

INSTRUCTIONS = (
    "You are moot, a coding agent working in the person's repository. Be exact and brief; "
    "use your tools to look before you change anything."
)


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
    mcp_servers: Sequence[McpServerConfig] = ()
    """MCP servers the front end brings (an editor's, over ACP), besides the files' own."""
    allow_project_mcp: Sequence[str] = ()
    """Repository MCP servers that may start without the person's approval (`*`: all)."""
    editor_buffers: EditorBuffers | None = None
    """The editor's text of files (unsaved changes included), for `read`; None: the disk."""
    editor_terminal: EditorTerminal | None = None
    """The editor's terminal, for shell commands when the person chooses it over the sandbox."""


class LocalClient:
    """The `Client` protocol over a session assembled in this process."""

    def __init__(self, session: Session, store: Store, settings: Settings) -> None:
        self._session = session
        self._runtime: Runtime = session.runtime
        self._store = store
        self._settings = settings
        self._query = StoreQueries(store)
        self._closed = False

    @property
    def session_id(self) -> str:
        return self._runtime.session_id

    @property
    def query(self) -> StoreQueries:
        return self._query

    def submit(self, op: ops.Op) -> str:
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
            sandbox=SandboxStatus(shell.backend, shell.reason),
            open_run=runtime.unfinished_run,
            running=runtime.running,
            context_window=self._context_window(agents[0].model),
            git_branch=_git_branch(self._session.workspace.root),
            settings=msgspec.to_builtins(self._settings),
            notices=tuple(self._session.mcp.notices()) if self._session.mcp is not None else (),
        )

    def _context_window(self, model: str) -> int | None:
        if model.startswith("scripted"):
            return None
        from moot.providers.catalog import lookup

        try:
            return lookup(model, self._settings.models).context_window
        except Exception:  # an odd name: the status line just shows no percentage
            return None

    async def close(self) -> None:
        """Interrupt what runs, end the subscriptions, then the session and the store."""
        if self._closed:
            return
        self._closed = True
        try:
            self._runtime.submit(ops.Shutdown())
            await self._runtime.wait()
            await self._session.close()  # background shells, the sandbox's container
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
    try:
        settings = load_settings(cwd)
        hooks = hook_config(settings, cwd)
    except SettingsError as exc:  # HookConfigError included
        raise SetupError(str(exc)) from None
    model = options.model or settings.model
    if not model:
        raise SetupError(
            "no model: pass --model provider/model (or set MOOT_MODEL, or `model` in settings)"
        )
    try:
        # A bad name, script or missing key is a usage error, before any session exists.
        resolve_model(model, session_environ(settings), models=settings.models)
    except UnknownModel as exc:
        raise SetupError(str(exc)) from None
    rules = session_rules(settings, options.allowed_tools, options.disallowed_tools)
    # The runtime gets the name, not the provider: it resolves names itself and moves a scripted
    # provider past the turns a resumed session has already played.
    agent = Agent("moot", role="coding agent", instructions=INSTRUCTIONS, model=model)
    limits = Limits(max_turns=options.max_turns) if options.max_turns else Limits()
    if store is None:
        from moot.store import open_store

        store = open_store()
    try:
        if options.session_id is not None and store.session(options.session_id) is None:
            raise SetupError(f"no session {options.session_id!r}")
        session_id = (
            options.session_id or store.create_session(title=options.title, workspace=str(cwd)).id
        )
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
            mcp_servers=options.mcp_servers,
            allow_project_mcp=options.allow_project_mcp,
            editor_buffers=options.editor_buffers,
            editor_terminal=options.editor_terminal,
        )
    except BaseException:
        store.close()
        raise
    return LocalClient(session, store, settings)


def open_queries() -> StoreQueries:
    """Read-only queries over the sessions database, for front ends with no session open
    (`moot sessions list`); `close()` them when done."""
    from moot.store import open_store

    return StoreQueries(open_store(), owns_store=True)


def _git_branch(root: Path) -> str:
    """The branch HEAD names, read from `.git/HEAD` (no git process: the status line asks often)."""
    try:
        head = (root / ".git" / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""


def _auto_commit(options: SessionOptions, settings: Settings) -> bool:
    if options.auto_commit is not None:
        return options.auto_commit
    return bool(os.environ.get("MOOT_AUTO_COMMIT") or settings.auto_commit)
