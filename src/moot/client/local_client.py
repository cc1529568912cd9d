"""`LocalClient`: the client surface over a session this process runs (`open_client` in
`client/local.py` assembles it).

Every op goes to the runtime as it is: the client only puts the git status into the prompts
before the first op (`client/late_facts.py`), starts the session's MCP servers the first time
the session is used, and reads the session's files again once a note changed the memory
(`memory_noted`). What is not an op (a fork, the person's key) is `SessionAdmin`.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from moot.client.queries import StoreQueries
from moot.client.session import Session
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.client import (
    AgentStatus,
    ContextPart,
    ContextReport,
    InstructionFiles,
    ModelChoice,
    PermissionsReport,
    SandboxStatus,
    SessionStatus,
    WorkspaceFiles,
)
from moot.protocol.mcp import McpResourceText, McpServerStatus
from moot.protocol.subscription import Subscription
from moot.settings import Settings, sandbox_backend
from moot.store.base import Store

TITLE_WAIT_S = 10.0
"""How long closing a session waits for a title its model is still writing (`modelTitles`)."""


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
        self._runtime.listeners.append(self._heard)

    @property
    def session_id(self) -> str:
        return self._runtime.session_id

    @property
    def query(self) -> StoreQueries:
        return self._query

    def submit(self, op: ops.Op) -> str:
        settle, self._session.settle_prompt = self._session.settle_prompt, None
        if settle is not None:  # the git status joins the prompts before the first op, bounded
            settle()
        if isinstance(op, ops.RestartMcpServer):
            self._start_mcp()  # a restart needs the servers' host started
        submission = self._runtime.submit(op)
        self._start_mcp()  # after the op: a turn's first step goes before any server's start
        return submission

    def _heard(self, event: ev.Event) -> None:
        if isinstance(event, ev.MemoryNoted):
            self._files = None  # the memory is read again

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

    async def mcp_prompt(self, server: str, prompt: str, arguments: dict[str, str]) -> str:
        if self._session.mcp is None:
            raise LookupError("this session has no MCP servers")
        self._start_mcp()
        return await self._session.mcp.prompt(server, prompt, arguments)

    async def mcp_ready(self) -> None:
        if self._session.mcp_ready is not None:
            await self._session.mcp_ready()

    async def mcp_resource(self, server: str, uri: str) -> McpResourceText:
        if self._session.mcp is None:
            raise LookupError("this session has no MCP servers")
        self._start_mcp()
        await self._session.mcp.wait_ready(server, 30)
        return await self._session.mcp.resource(server, uri)

    def files(self) -> WorkspaceFiles:
        listing = self._session.workspace.file_listing()  # the index glob and the map share
        return WorkspaceFiles(listing.files, listing.notes)

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
            git_branch=git_branch(self._session.workspace.root),
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
            added_dirs=tuple(map(str, self._session.workspace.added_roots)),
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
        chosen = sandbox_backend(settings)
        chosen_in_a_file = chosen == "none" and not os.environ.get("MOOT_SANDBOX")
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

    def models(self) -> list[ModelChoice]:
        from moot.client.models import model_choices

        in_use = [a.model for a in self._runtime.agents.values() if isinstance(a.model, str)]
        return model_choices(self._settings, in_use)

    # ---- `moot.protocol.client.SessionAdmin` -------------------------------------------------

    def fork(self, at: int | None = None) -> str:
        from moot.client.upkeep import SessionUpkeep

        return SessionUpkeep(self._store).fork(self.session_id, at)

    async def save_key(self, provider: str, key: str) -> str:
        """See `protocol.client.SessionAdmin`: checked with the session's environment (its base
        URLs), saved where `moot login` saves."""
        from moot.client.environment import session_environ
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
                self._session.workspace.close()  # the repository map's background parse
            discard_if_empty(self._store, self.session_id)  # the runtime let its claim go
        finally:
            self._store.close()


def discard_if_empty(store: Store, session_id: str) -> None:
    """A session without a turn is not kept (`SessionUpkeep.discard_if_empty`)."""
    from moot.client.upkeep import SessionUpkeep

    SessionUpkeep(store).discard_if_empty(session_id)


def git_branch(root: Path) -> str:
    """The branch HEAD names, read from `.git/HEAD` (no git process: the status line asks often)."""
    from moot.workspace.git_config import read_head

    head = read_head(str(root / ".git")) or ""  # bounded: a HEAD may be a link to /dev/zero
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""
