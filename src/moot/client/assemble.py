"""Setting up a session for a front end: from settings and a few choices to a ready `Runtime`.

Every front end (headless runs today; the TUI, ACP and MCP servers later) needs the same
assembly, in this order, because each step depends on the last:

1. The permission rules: settings plus the front end's own (`--allowedTools`), and the mode.
2. The workspace, hiding what `Read(...)` deny rules cover from every walk.
3. The sandbox, masking the denied paths, with the scripts hooks run protected (hooks run on
   the host, so nothing inside may change them), and so are the repository's hooks directory
   and config files in the workspace (moot's git runs on the host too; `host_git_at_start`).
4. The approval policy (`RulesPolicy`; wrapped in `NoAsking` where nobody answers).
5. The tools, less those a bare deny rule removes.
6. The hooks and the `Runtime`, in the mode the session last switched to unless one is named.

`open_session` does all of it; `Session.close` ends what outlives a turn (background shells,
the sandbox's container).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from moot.client.errors import SetupError
from moot.client.rules import inode_check, masks_for
from moot.client.rules import session_rules as session_rules  # `moot sandbox` imports it here
from moot.client.settings_watch import SettingsWatch
from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.options import AttachFiles, Refusal, RuntimeOptions, SessionCommands
from moot.core.run import TurnEnd
from moot.core.runtime import Runtime
from moot.permissions.headless import NoAsking
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import RuleSet, read_denied, tool_hidden
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.messages import AttachedFile
from moot.protocol.modes import PermissionMode
from moot.providers.base import UnknownModel
from moot.providers.registry import resolve_model
from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import DEFAULT_PROTECTED, SandboxPolicy
from moot.sandbox.select import SETTING_VARIABLE, SandboxChoice, choose_sandbox
from moot.settings import Settings, settings_files
from moot.store.base import Store
from moot.tools.base import Tool
from moot.tools.builtin import builtin_tools, outputs_dir, session_workspace
from moot.tools.exit_plan_mode import exit_plan_mode_tool
from moot.tools.redirects import PolicyRedirects
from moot.workspace.host_git import host_git_at_start
from moot.workspace.paths import Workspace
from moot.workspace.snapshots import FileSnapshots

if TYPE_CHECKING:
    from moot.client.briefing import Briefing
    from moot.client.facts import GitProbe, SessionFacts
    from moot.client.session_rules import SessionRules
    from moot.hooks import HookConfig, Hooks
    from moot.mcp.config import LoadedServers
    from moot.mcp.manager import McpManager
    from moot.protocol.client import PromptPart
    from moot.protocol.editor import EditorBuffers, EditorTerminal
    from moot.protocol.mcp import McpServerConfig
    from moot.skills.guidance import Guidance
    from moot.workspace.absent import AbsentPaths


class Session(msgspec.Struct):
    """A session ready to take turns, and what must end with it."""

    runtime: Runtime
    workspace: Workspace
    shell: SandboxChoice
    """The sandbox shell commands run in (or why there is none)."""
    shells: BackgroundShells
    rules: Callable[[], SessionRules] | None = None
    """Its permission rules (where each comes from, and the person's changes), made when
    asked: `moot -p` never needs them."""
    briefing: Briefing | None = None
    """What the session's files (skills, commands, agents, memory) made of it; None: none
    were read."""
    prompt_parts: tuple[PromptPart, ...] = ()
    """What every request of the person's agent carries, part by part (`/context`)."""
    mcp: McpManager | None = None
    """The session's MCP servers (None: no file defines any)."""

    async def close(self) -> None:
        """End background shells, the MCP servers and the sandbox (a Docker container)."""
        if self.mcp is not None:
            await self.mcp.close()
        await self.shells.close()
        if self.shell.sandbox is not None:
            await self.shell.sandbox.close()


def hook_config(settings: Settings, cwd: Path) -> HookConfig | None:
    """The settings' hooks, checked; None when none are set.

    Raises:
        HookConfigError: A settings file's `hooks` do not fit (a `SettingsError`).
    """
    if not settings.hooks:
        return None
    from moot.hooks import hooks_from_settings  # lazy: no hooks set, moot.hooks is never imported

    return hooks_from_settings(settings.hooks, cwd)


def sandbox_setting(settings: Settings, environ: Mapping[str, str] | None = None) -> str:
    """Which sandbox to use: `MOOT_SANDBOX`, else the settings' `sandbox`, else auto."""
    env = os.environ if environ is None else environ
    return env.get(SETTING_VARIABLE) or settings.sandbox or "auto"


def hook_scripts(hooks: HookConfig | None, root: Path) -> tuple[str, ...]:
    """The workspace files hook commands name: hooks run on the host, so these are protected
    like `.moot/` (see `moot.hooks.scripts`)."""
    return hooks.scripts(root) if hooks else ()


def sandbox_policy(
    root: Path,
    rules: RuleSet,
    scripts: Sequence[str] = (),
    *,
    output_dir: Path | None = None,
    absent: AbsentPaths | None = None,
    env_names: Iterable[str] = (),
) -> SandboxPolicy:
    """What shell commands may touch: the workspace, less what deny rules mask, with the
    hooks' `scripts` protected besides `.git` and `.moot`, and `absent` kept from being made;
    and the variables they get besides the usual ones: `env_names`, those the settings' `env`
    names."""
    return SandboxPolicy(
        root,
        output_dir=output_dir,
        masks=masks_for(rules, root),  # what shell commands cannot see or edit
        protected=(*DEFAULT_PROTECTED, *scripts),
        absent=absent,
        env_names=tuple(env_names),
    )


def session_environ(settings: Settings, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a session works with: the settings' `env` under the process's own, so
    a variable set in the shell wins over one in a settings file (an empty one does not: moot
    reads empty as unset). Model keys and base URLs are read from it, and shell commands get
    what of it the sandbox passes (`moot.sandbox.env.scrub_env`: named variables, no secret).
    """
    merged = dict(os.environ if environ is None else environ)
    for name, value in settings.env.items():
        if not merged.get(name):
            merged[name] = value
    return merged


def open_session(
    store: Store,
    session_id: str,
    cwd: Path,
    *,
    settings: Settings,
    agent: Agent,
    rules: RuleSet,
    mode: PermissionMode | None = None,
    hooks: HookConfig | None = None,
    limits: Limits | None = None,
    can_ask: bool = True,
    auto_commit: bool = False,
    model: str | None = None,
    allowed_tools: Sequence[str] = (),
    disallowed_tools: Sequence[str] = (),
    guidance: Guidance | None = None,
    git_probe: GitProbe | None = None,
    mcp_servers: Sequence[McpServerConfig] = (),
    allow_project_mcp: Sequence[str] = (),
    editor_buffers: EditorBuffers | None = None,
    editor_terminal: EditorTerminal | None = None,
    resumed: bool = False,
) -> Session:
    """Assemble a session's runtime (see the module docstring for the steps).

    Args:
        store: Where the session's log lives; `session_id` must exist in it.
        cwd: The workspace directory.
        settings: The merged settings (sandbox, default mode).
        agent: The agent that answers the person.
        rules: The permission rules in force (`session_rules`).
        mode: The permission mode named by the front end (`--permission-mode`); None keeps
            the mode the session last switched to, or the settings' default.
        hooks: The settings' hooks (`hook_config`), None for none.
        limits: Bounds for each run.
        can_ask: False where nobody answers approvals: what would ask is refused instead.
        auto_commit: Commit the files each turn changed as it ends (`moot undo` takes it back).
        model: The model named by the front end (`--model`); None keeps the model the session
            last switched to (`model_changed`), else the agent's.
        allowed_tools: The front end's own allow rules (already in `rules`), so that
            `/permissions` can say where each rule comes from.
        disallowed_tools: The front end's own deny rules, likewise.
        guidance: The skills, commands, agent definitions and memory read for the session
            (`moot.skills.guidance.load_guidance`): the prompts are rendered around them, the
            skill tool and the defined peers join. None: the agent is used as given.
        git_probe: The git status probe started as the session began opening, for the prompt.
        mcp_servers: MCP servers the front end brings, besides those the files define.
        allow_project_mcp: Repository MCP servers that may start without the person's
            approval this time (`*`: all of them).
        editor_buffers: The editor's text of files, for `read` (a front end in an editor).
        editor_terminal: The editor's terminal, which shell commands use when the person
            chooses it (`EditorTerminal.chosen`) instead of moot's sandbox.
        resumed: The session is a stored one opened again: its log records where this
            sitting begins (`session_resumed`).

    Raises:
        SetupError: The sandbox setting is not one moot knows.
    """
    start_mode = PermissionMode(mode or settings.permissions.default_mode or PermissionMode.DEFAULT)
    environ = session_environ(settings)
    workspace = session_workspace(
        store, session_id, cwd, snapshot_max_bytes=settings.snapshot_max_bytes
    )
    workspace.hidden = read_denied(rules, workspace.root)
    if editor_buffers is not None:
        workspace.editor_text = editor_buffers.read_text
    mcp_servers_loaded = _mcp_servers(workspace.root, environ, mcp_servers)
    # Hook scripts and the repository scripts MCP servers run both run on the host: protected.
    scripts = (
        *hook_scripts(hooks, workspace.root),
        *_mcp_scripts(mcp_servers_loaded, workspace.root),
    )
    git = workspace.host_git = host_git_at_start(
        workspace.root, allow_hooks=bool(settings.allow_git_hooks), also_protected=scripts
    )
    if git.absent:  # the git config names hooks or config files that do not exist yet
        from moot.workspace.absent import AbsentPaths

        quarantine = outputs_dir(session_id) / "quarantine"
        workspace.absent = AbsentPaths(workspace.root, git.absent, quarantine)
    policy_for_shell = sandbox_policy(
        workspace.root,
        rules,
        (*scripts, *git.protected()),
        output_dir=outputs_dir(session_id),
        absent=workspace.absent,
        env_names=settings.env,
    )
    workspace.hidden_inodes = inode_check(rules, workspace.root, policy_for_shell.masks)
    try:
        shell = choose_sandbox(
            sandbox_setting(settings, environ),
            policy_for_shell,
            bypass=start_mode is PermissionMode.BYPASS_PERMISSIONS,
            session_id=session_id,
        )
    except ValueError as exc:
        raise SetupError(f"MOOT_SANDBOX: {exc}") from None
    if editor_terminal is not None:
        from msgspec.structs import replace

        from moot.client.editor_shell import ChoosableShell

        chosen = ChoosableShell(shell.sandbox, editor_terminal, policy_for_shell.env_names)
        shell = replace(shell, sandbox=chosen)
    watch = SettingsWatch(settings_files(workspace.root))

    def refresh() -> None:
        if watch.changed():
            with contextlib.suppress(ValueError):  # settings that no longer load: the old rules
                rules_of_session().reload()

    rules_policy = RulesPolicy(
        rules,
        workspace.root,
        mode=start_mode,
        shell=shell.backend,
        protected=(*scripts, *git.protected_files()),
        refresh=refresh,
    )
    policy: ApprovalPolicy = rules_policy if can_ask else NoAsking(rules_policy, workspace.root)
    shells = BackgroundShells()
    tools = [
        t
        for t in [
            *builtin_tools(
                store,
                session_id,
                workspace,
                shell,
                shells,
                env=environ,
                redirects=PolicyRedirects(policy),  # a redirect is settled as its first URL
            ),
            exit_plan_mode_tool(),
        ]
        if not tool_hidden(t.name, rules)
    ]

    def rules_of_session() -> SessionRules:
        from moot.client.session_rules import SessionRules  # `/permissions` only

        return SessionRules(rules_policy, workspace, session_id, allowed_tools, disallowed_tools)

    setting = sandbox_setting(settings, environ)

    def build_person_tools() -> Mapping[str, Tool]:
        from moot.client.person_tools import person_tools  # the first `RunTool` of one of them
        from moot.sandbox.status import setting_source

        source = lambda: setting_source(setting, bool(settings.sandbox), environ)  # noqa: E731
        tools: Mapping[str, Tool] = person_tools(  # type: ignore[assignment]  # `parameters` is a property there
            workspace, shell, policy_for_shell, source, shells, rules_of_session, environ
        )
        return tools

    agents = [agent]
    turn_ends: list[TurnEnd] = [AutoCommitter(workspace, session_id)] if auto_commit else []
    briefing: Briefing | None = None
    commands: SessionCommands | None = None
    if guidance is not None:
        from moot.client.briefing import brief, skill_read_roots
        from moot.client.commands import FileCommands
        from moot.skills.policy import ScopedPolicy

        facts = session_facts(
            workspace.root, start_mode, shell.backend, policy_for_shell.network, git_probe
        )

        def check_model(name: str) -> str | None:
            try:
                resolve_model(name, environ, models=settings.models)
            except UnknownModel as exc:
                return str(exc)
            return None

        briefing = brief(
            guidance,
            agent,
            facts,
            tools,
            check_model=check_model,
            hidden=lambda name: tool_hidden(name, rules),
        )
        agents = briefing.agents
        tools += briefing.tools
        workspace.read_roots += skill_read_roots(guidance, workspace.root)
        policy = ScopedPolicy(policy, rules_policy, grants=briefing.grants, limits=briefing.limits)
        turn_ends.append(briefing.grants.end_turn)
        commands = FileCommands(briefing)
    mcp = _mcp(
        settings, mcp_servers_loaded, workspace.root, environ, session_id, rules, allow_project_mcp
    )
    if mcp is not None:
        tools += mcp.tools()  # the cached lists: the servers start in the background later
    runtime = Runtime(
        agents,
        store=store,
        session_id=session_id,
        options=RuntimeOptions(
            tools=tools,
            limits=limits,
            approval=policy,
            mode=start_mode.value,
            hooks=_hooks(hooks, workspace.root, can_ask=can_ask),
            turn_end=_turn_end(turn_ends),
            resolve=lambda name: resolve_model(name, environ, models=settings.models),
            person_tools=LazyTools(PERSON_TOOLS, build_person_tools),  # type: ignore[arg-type]
            attach=_attach(workspace),
            allow_background_agents=bool(settings.allow_background_agents),
            # Where nobody answers approvals (`moot -p`), nobody sends messages either.
            person_replies=can_ask,
            model_titles=bool(settings.model_titles),
            commands=commands,
            snapshots=FileSnapshots(store, session_id, workspace.root),
            mcp=mcp,
        ),
    )
    if resumed:
        # Where this sitting begins and what it runs with, before the switches its flags make.
        entry = runtime.entry.model
        runtime.record_session(
            ev.SessionResumed(
                model=model or (entry if isinstance(entry, str) else entry.name),
                mode=mode.value if mode is not None else runtime.mode,
                agents=tuple(runtime.agents),
            )
        )
    if mode is not None and runtime.mode != mode:
        # The mode belongs to the session: a resumed one goes on in the mode it switched to,
        # unless the front end names one, which is a switch like any other (`mode_changed`).
        runtime.submit(ops.SetMode(mode=mode.value))
    if model is not None and runtime.entry.model != model:
        # The model too, the same way (`model_changed`).
        runtime.submit(ops.SetModel(model=model))
    prompt_parts: tuple[PromptPart, ...] = ()
    if briefing is not None:
        from moot.client.briefing import context_parts

        background = bool(settings.allow_background_agents)
        prompt_parts = context_parts(briefing, agents, tools, background=background)
    if mcp is not None:
        mcp.attach(runtime.tools)  # a server's live tools replace its cached ones as it starts
    return Session(
        runtime,
        workspace,
        shell,
        shells,
        rules=rules_of_session,
        briefing=briefing,
        prompt_parts=prompt_parts,
        mcp=mcp,
    )


PERSON_TOOLS = ("undo", "doctor", "sandbox", "outline", "jobs", "permission_rule", "trust_settings")
"""The tools only the person runs (`moot.client.person_tools`), named here so that listing them
loads nothing."""


class LazyTools:
    """Tools known by name, built all at once when the first is looked up (a read-only
    mapping; not a `Mapping` subclass, whose ABC machinery costs start-up time)."""

    def __init__(self, names: Sequence[str], build: Callable[[], Mapping[str, Tool]]) -> None:
        self._names, self._build = tuple(names), build
        self._tools: Mapping[str, Tool] | None = None

    def __getitem__(self, name: str) -> Tool:
        if name not in self._names:
            raise KeyError(name)
        if self._tools is None:
            self._tools = self._build()
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def get(self, name: str, default: Tool | None = None) -> Tool | None:
        return self[name] if name in self._names else default


def _attach(workspace: Workspace) -> AttachFiles:
    """Reads the `@path` files of a prompt (`moot.client.prompt_files`, loaded at the first `@`)."""

    def attach(prompt: str, refused: Refusal) -> Sequence[AttachedFile]:
        from moot.client.prompt_files import PromptFiles

        return PromptFiles(workspace)(prompt, refused)

    return attach


def session_facts(
    root: Path, mode: PermissionMode | None, backend: str, network: bool, git: GitProbe | None
) -> SessionFacts:
    """The environment the session's prompt describes."""
    from moot.client.facts import (
        SessionFacts,
        git_summary,
        platform_name,
        sandbox_words,
        shell_name,
        today,
    )

    return SessionFacts(
        cwd=str(root),
        platform=platform_name(),
        shell=shell_name(),
        date=today(),
        git=git.summary() if git is not None else git_summary(root),
        sandbox=sandbox_words(backend, network),
        mode=mode.value if mode is not None else "none (no permission rules)",
    )


def _turn_end(ends: list[TurnEnd]) -> TurnEnd | None:
    """One `TurnEnd` that runs each of `ends` in order (None for none)."""
    if not ends:
        return None
    if len(ends) == 1:
        return ends[0]

    def each(prompt: str) -> list[ev.Event]:
        return [event for end in ends for event in end(prompt)]

    return each


def _mcp_servers(
    root: Path, environ: Mapping[str, str], extra: Sequence[McpServerConfig]
) -> LoadedServers | None:
    """The MCP servers the files and the front end define (None: none)."""
    from moot.mcp.session import session_servers  # msgspec only; the SDK never loads in moot

    return session_servers(root, environ, extra)


def _mcp_scripts(loaded: LoadedServers | None, root: Path) -> tuple[str, ...]:
    if loaded is None:
        return ()
    from moot.mcp.session import server_scripts

    return server_scripts(loaded, root)


def _mcp(
    settings: Settings,
    loaded: LoadedServers | None,
    root: Path,
    environ: Mapping[str, str],
    session_id: str,
    rules: RuleSet,
    allowed: Sequence[str],
) -> McpManager | None:
    """The session's MCP servers, or None when nothing defines one."""
    if loaded is None:
        return None
    from moot.mcp.session import session_mcp

    return session_mcp(
        loaded,
        root,
        environ,
        outputs_dir=outputs_dir(session_id),
        hidden=lambda name: tool_hidden(name, rules),
        allowed=allowed,
        tool_search=settings.mcp_tool_search,
    )


class AutoCommitter:
    """The session's `TurnEnd` under auto-commit: the files a turn changed become moot's own
    commit as it ends (`moot undo` takes it back), recorded as `auto_committed`."""

    def __init__(self, workspace: Workspace, session_id: str) -> None:
        self.workspace = workspace
        self.session_id = session_id

    def __call__(self, prompt: str) -> list[ev.Event]:
        # Lazy: gitpython loads only for sessions that commit.
        from moot.workspace.agent_commits import AutoCommit
        from moot.workspace.git import GIT_ERRORS

        changed = AutoCommit(self.workspace, self.session_id, lambda: set(self.workspace.changed))
        try:
            made = changed.commit_turn(prompt)
        except GIT_ERRORS as exc:
            return [ev.Error(source="session", message=f"auto-commit skipped: {exc}")]
        if made is None:
            return []
        return [
            ev.AutoCommitted(
                sha=made.sha, subject=made.subject, files=tuple(made.files), note=made.note
            )
        ]


def _hooks(config: HookConfig | None, root: Path, *, can_ask: bool) -> Hooks | None:
    """The session's hook runner; None (no cost, no hook events) when no command is set."""
    if not config:
        return None
    from moot.hooks import Hooks  # lazy, as in hook_config

    return Hooks(config, root, can_ask=can_ask)
