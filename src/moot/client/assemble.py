"""Setting up a session for a front end: from settings and a few choices to a ready `Runtime`.

Every front end (`open_client` for the app, the REPL, ACP and `moot -p`; `moot mcp serve`)
needs the same assembly. A front end describes the session in one value, `SessionAssembly`
(`client/session.py`, with `Session`, what comes of it); `open_session` assembles it in named
steps, in this order, because each depends on the last:

1. `_workspace`: the workspace, hiding what `Read(...)` deny rules cover from every walk, and
   what runs on the host (hook and MCP server scripts, moot's own git), which is protected.
2. `_sandbox`: the sandbox, masking the denied paths, with those host scripts, the
   repository's hooks directory and its config files protected (`host_git_at_start`), and
   the network proxy the settings ask for (`client/network.py`).
3. `_policy`: the approval policy (`RulesPolicy`, following the settings files; `NoAsking`
   where nobody answers), and the session's rules as `/permissions` changes them.
4. `_tools`: the built-in tools (`client/session_tools.py`), less those a bare deny rule
   removes.
5. `_briefing`: what the session's files make of it (the prompts, skills, peers, commands),
   then the MCP servers' tools (`_mcp`).
6. `_runtime`: the hooks, the person's tools and the `Runtime`, with the seams its ops reach
   through (the files' commands and memory, the file snapshots, the MCP servers, the
   network questions).
7. `_sitting`: a resumed session records where the sitting begins, then the mode and model
   the front end names (each an op).

`Session.close` ends what outlives a turn (background shells, MCP servers, the sandbox's
container).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from moot.client.added_dirs import added_dirs
from moot.client.environment import (
    hook_runner,
    hook_scripts,
    sandbox_policy,
    sandbox_setting,
    sandbox_source,
    session_environ,
)
from moot.client.errors import SetupError
from moot.client.mcp_ready import ServersReady, servers_ready
from moot.client.network import SessionNetwork, session_network
from moot.client.rules import hide_read_denied, inode_check
from moot.client.session import Session, SessionAssembly
from moot.client.session_tools import ServersOnDemand, model_tools, person_tools_of, prompt_attach
from moot.client.settings_watch import SettingsWatch
from moot.client.turn_end import AutoCommitter, turn_end
from moot.core.agent import Agent
from moot.core.options import RuntimeOptions, SessionCommands
from moot.core.run import TurnEnd
from moot.core.runtime import Runtime
from moot.permissions.headless import NoAsking
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import tool_hidden
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalPolicy
from moot.protocol.modes import PermissionMode
from moot.providers.base import Provider, UnknownModel
from moot.providers.registry import resolve_model
from moot.sandbox.background import BackgroundShells
from moot.sandbox.base import SandboxPolicy
from moot.sandbox.select import SandboxChoice, choose_sandbox
from moot.settings import Settings, settings_files
from moot.store.base import Store
from moot.tools.base import Tool
from moot.tools.builtin import outputs_dir, session_workspace
from moot.workspace.host_git import HostGit, host_git_at_start
from moot.workspace.paths import Workspace
from moot.workspace.snapshots import FileSnapshots

if TYPE_CHECKING:
    from moot.client.briefing import Briefing
    from moot.client.session_rules import SessionRules
    from moot.mcp.config import LoadedServers
    from moot.mcp.manager import McpManager
    from moot.protocol.client import PromptPart


class _Given(msgspec.Struct, frozen=True):
    """What every step reads: the session, what it is assembled from, and what follows at once
    from that (its environment, the mode it starts in)."""

    store: Store
    session_id: str
    assembly: SessionAssembly
    environ: Mapping[str, str]
    """The session's environment (`session_environ`)."""
    mode: PermissionMode
    """The mode the session starts in, unless it switched to another before."""

    @property
    def settings(self) -> Settings:
        return self.assembly.settings


class _Place(msgspec.Struct, frozen=True):
    """Step 1: the workspace, and what of it runs on the host."""

    workspace: Workspace
    host_scripts: tuple[str, ...]
    """Workspace files hook commands and the repository's MCP servers run (on the host), and
    absolute, those in the added directories (`--add-dir`)."""
    git: HostGit
    """What moot's git (on the host) may trust of the repository."""
    servers: LoadedServers | None
    """The MCP servers the files and the front end define (None: none)."""


class _Shell(msgspec.Struct, frozen=True):
    """Step 2: where shell commands run, and what they may touch."""

    policy: SandboxPolicy
    choice: SandboxChoice
    shells: BackgroundShells
    servers: ServersOnDemand
    """The language servers edits ask, started in `choice`'s sandbox as first needed."""
    network: SessionNetwork | None = None  # the proxy (`sandbox.network`); None: no network


class _Policy(msgspec.Struct, frozen=True):
    """Step 3: who settles tool calls."""

    rules: RulesPolicy
    """The permission rules' policy (the session's rules and mode)."""
    approval: ApprovalPolicy
    """What settles each call: `rules`, or `NoAsking` around it where nobody answers."""
    of_session: Callable[[], SessionRules]
    """The session's rules as `/permissions` shows and changes them."""


class _Shaped(msgspec.Struct, frozen=True):
    """Step 5: the agents, tools and policy as the session's files shape them."""

    agents: list[Agent]
    tools: list[Tool]
    approval: ApprovalPolicy
    turn_ends: list[TurnEnd]
    briefing: Briefing | None = None
    commands: SessionCommands | None = None


def open_session(store: Store, session_id: str, cwd: Path, assembly: SessionAssembly) -> Session:
    """Assemble a session's runtime, step by step (see the module docstring).

    Args:
        store: Where the session's log lives; `session_id` must exist in it.
        session_id: The session to assemble (a new one, or a stored one: `assembly.resumed`).
        cwd: The workspace directory.
        assembly: What the session is made of.

    Raises:
        SetupError: The sandbox setting is not one moot knows.
    """
    settings = assembly.settings
    default = settings.permissions.default_mode or PermissionMode.DEFAULT
    mode = PermissionMode(assembly.mode or default)
    given = _Given(store, session_id, assembly, session_environ(settings), mode)
    place = _workspace(given, cwd)
    shell = _sandbox(given, place)
    policy = _policy(given, place, shell)
    shaped = _briefing(given, place, shell, policy, _tools(given, place, shell, policy))
    mcp = _mcp(given, place)
    if mcp is not None:  # the cached lists: the servers start in the background later
        shaped = msgspec.structs.replace(shaped, tools=[*shaped.tools, *mcp.tools()])
    ready = servers_ready(mcp, assembly.mcp_late, settings.mcp_startup_wait, given.environ)
    runtime = _runtime(given, place, shell, policy, shaped, mcp, ready)
    _sitting(runtime, assembly)
    prompt_parts: tuple[PromptPart, ...] = ()
    if shaped.briefing is not None:
        from moot.client.briefing import context_parts

        background = bool(settings.allow_background_agents)
        briefing, agents, tools = shaped.briefing, shaped.agents, shaped.tools
        prompt_parts = context_parts(briefing, agents, tools, background=background)
    if mcp is not None:
        mcp.attach(runtime.tools)  # a server's live tools replace its cached ones as it starts
        from moot.client.mcp_sampler import model_sampler  # only with MCP servers

        mcp.questions.bind(runtime.record_session, model_sampler(runtime))  # see its docstring
    if assembly.client_tools is not None:
        from moot.client.client_tools import attach_client_tools

        attach_client_tools(assembly.client_tools, runtime.tools)
    session = Session(
        runtime,
        place.workspace,
        shell.choice,
        shell.shells,
        rules=policy.of_session,
        briefing=shaped.briefing,
        prompt_parts=prompt_parts,
        mcp=mcp,
        mcp_ready=ready,
        servers=shell.servers,
    )
    if shaped.briefing is not None and assembly.git_probe is not None:
        from moot.client.late_facts import LateGit  # the status, at the first op

        session.settle_prompt = LateGit(assembly.git_probe, shaped.briefing, session).settle
    return session


def _workspace(given: _Given, cwd: Path) -> _Place:
    """Step 1: the workspace, hiding what `Read(...)` deny rules cover; what runs on the host
    (hook commands' and the repository's MCP servers' scripts, moot's git) is found here, and
    a file the git config names that does not exist yet is kept from coming into being."""
    assembly, session_id = given.assembly, given.session_id
    settings, rules = assembly.settings, assembly.rules
    workspace = session_workspace(
        given.store,
        session_id,
        cwd,
        snapshot_max_bytes=settings.snapshot_max_bytes,
        added_roots=added_dirs(assembly.added_dirs, Path.cwd()),
    )
    root = workspace.root
    hide_read_denied(workspace, rules)
    if assembly.editor_buffers is not None:
        workspace.editor_text = assembly.editor_buffers.read_text
        if assembly.editor_buffers.writes:
            workspace.editor_write = assembly.editor_buffers.write_text
    from moot.mcp.session import server_scripts, session_servers  # msgspec only, not the SDK

    servers = session_servers(root, given.environ, assembly.mcp_servers)
    if assembly.strict_mcp and servers is not None:  # the front end's servers, and no file's
        given_names = {s.name for s in assembly.mcp_servers}
        kept = {n: s for n, s in servers.servers.items() if n in given_names}
        servers = msgspec.structs.replace(servers, servers=kept, problems=[]) if kept else None

    def named_in(base: Path) -> tuple[str, ...]:
        mcp_scripts = server_scripts(servers, base) if servers is not None else ()
        return (*hook_scripts(assembly.hooks, base), *mcp_scripts)

    scripts = named_in(root)
    git = workspace.host_git = host_git_at_start(
        root, allow_hooks=bool(settings.allow_git_hooks), also_protected=scripts
    )
    scripts += tuple(f"{a}/{rel}" for a in workspace.added_roots for rel in named_in(a))
    if git.absent:  # the git config names hooks or config files that do not exist yet
        from moot.workspace.absent import AbsentPaths

        quarantine = outputs_dir(session_id) / "quarantine"
        workspace.absent = AbsentPaths(root, git.absent, quarantine)
    return _Place(workspace, scripts, git, servers)


def _sandbox(given: _Given, place: _Place) -> _Shell:
    """Step 2: the sandbox shell commands run in, masking what deny rules cover, with what
    runs on the host protected; the editor's terminal when the person may choose it.

    Raises:
        SetupError: The sandbox setting is not one moot knows.
    """
    assembly, session_id, workspace = given.assembly, given.session_id, place.workspace
    settings, rules = assembly.settings, assembly.rules
    policy = sandbox_policy(
        workspace.root,
        rules,
        (*place.host_scripts, *place.git.protected()),
        output_dir=outputs_dir(session_id),
        absent=workspace.absent,
        env_names=settings.env,
        added=workspace.added_roots,
    )
    workspace.hidden_inodes = inode_check(rules, workspace.root, policy.masks)
    if network := session_network(settings, workspace.root, assembly):
        policy = msgspec.structs.replace(policy, proxy=network.proxy)
    try:
        choice = choose_sandbox(
            sandbox_setting(settings, given.environ),
            policy,
            bypass=given.mode is PermissionMode.BYPASS_PERMISSIONS,
            session_id=session_id,
            deferred=True,  # a local backend is built at its first command
        )
    except ValueError as exc:
        raise SetupError(f"MOOT_SANDBOX: {exc}") from None
    if policy.added and choice.backend == "docker":
        raise SetupError("--add-dir: the docker sandbox mounts the workspace only")
    if assembly.editor_terminal is not None:
        from moot.client.editor_shell import ChoosableShell

        chosen = ChoosableShell(choice.sandbox, assembly.editor_terminal, policy.env_names)
        choice = msgspec.structs.replace(choice, sandbox=chosen)
    servers = ServersOnDemand(workspace.root, settings.lsp, given.environ, choice.sandbox)
    return _Shell(policy, choice, BackgroundShells(), servers, network)


def _policy(given: _Given, place: _Place, shell: _Shell) -> _Policy:
    """Step 3: the permission rules' policy, in the starting mode, following the settings
    files as they change; where nobody answers, what would ask is refused (`NoAsking`)."""
    assembly, workspace = given.assembly, place.workspace
    watch = SettingsWatch(settings_files(workspace.root))

    def refresh() -> None:
        if watch.changed():
            with contextlib.suppress(ValueError):  # settings that no longer load: the old rules
                of_session().reload()

    rules = RulesPolicy(
        assembly.rules,
        workspace.root,
        mode=given.mode,
        shell=shell.choice.backend,
        protected=(*place.host_scripts, *place.git.protected_files()),
        added_roots=workspace.added_roots,
        refresh=refresh,
    )

    def of_session() -> SessionRules:
        from moot.client.session_rules import SessionRules  # `/permissions` only

        allowed, denied = assembly.allowed_tools, assembly.disallowed_tools
        layers = assembly.settings_layers
        return SessionRules(rules, workspace, given.session_id, allowed, denied, layers)

    approval = rules if assembly.can_ask else NoAsking(rules, workspace.root)
    return _Policy(rules, approval, of_session)


def _tools(given: _Given, place: _Place, shell: _Shell, policy: _Policy) -> list[Tool]:
    """Step 4: the built-in tools over the session's parts, less those a bare deny rule
    removes; a web redirect is settled by the policy as its first URL was."""
    return model_tools(
        given.store,
        given.session_id,
        place.workspace,
        shell.choice,
        shell.shells,
        environ=given.environ,
        policy=policy.approval,
        rules=given.assembly.rules,
        verify=msgspec.structs.asdict(given.assembly.settings.verify),  # held until approved
        servers=shell.servers,
    )


def _briefing(
    given: _Given, place: _Place, shell: _Shell, policy: _Policy, tools: list[Tool]
) -> _Shaped:
    """Step 5: what the session's files make of it (`client/briefing.py`): the prompts
    rendered around them, the skill tool, the peers they define, the policy that narrows those
    peers and widens active skills, and the commands and memory its ops answer from."""
    assembly, workspace = given.assembly, place.workspace
    turn_ends: list[TurnEnd] = []
    if assembly.auto_commit:
        turn_ends.append(AutoCommitter(workspace, given.session_id))
    guidance = assembly.guidance
    if guidance is None:
        return _Shaped(_prompted([assembly.agent], assembly), tools, policy.approval, turn_ends)
    from moot.client.briefing import brief, skill_read_roots
    from moot.client.commands import FileCommands
    from moot.client.facts import session_facts
    from moot.skills.policy import ScopedPolicy

    network = shell.policy.network
    mode = given.mode.value
    facts = session_facts(workspace.root, mode, shell.choice.backend, network, assembly.git_probe)
    rules = assembly.rules
    briefing = brief(
        guidance,
        assembly.agent,
        facts,
        tools,
        check_model=partial(_model_problem, given),
        hidden=lambda name: tool_hidden(name, rules),
    )
    workspace.read_roots += skill_read_roots(guidance, workspace.root)
    grants, limits = briefing.grants, briefing.limits
    approval = ScopedPolicy(policy.approval, policy.rules, grants=grants, limits=limits)
    turn_ends.append(grants.end_turn)
    tools = [*tools, *briefing.tools]
    commands = FileCommands(briefing)
    agents = _prompted(briefing.agents, assembly)
    return _Shaped(agents, tools, approval, turn_ends, briefing, commands)


def _prompted(agents: list[Agent], assembly: SessionAssembly) -> list[Agent]:
    """The agents, the person's with the front end's own system prompt, if it names one."""
    if assembly.system_prompt is None:
        return agents
    first = msgspec.structs.replace(agents[0], instructions=assembly.system_prompt)
    return [first, *agents[1:]]


def _model_problem(given: _Given, name: str) -> str | None:
    """What is wrong with a peer's model name (None: it resolves)."""
    try:
        _resolve(given, name)
    except UnknownModel as exc:
        return str(exc)
    return None


def _resolve(given: _Given, name: str) -> Provider:
    """A model name as a provider, in the session's environment and with its models."""
    return resolve_model(name, given.environ, models=given.settings.models)


def _runtime(
    given: _Given,
    place: _Place,
    shell: _Shell,
    policy: _Policy,
    shaped: _Shaped,
    mcp: McpManager | None,
    ready: ServersReady | None = None,
) -> Runtime:
    """Step 6: the `Runtime`, with the seams its ops reach through: the person's tools, the
    commands and memory of the files, the file snapshots, the MCP servers."""
    assembly, settings, environ = given.assembly, given.settings, given.environ
    store, session_id, workspace = given.store, given.session_id, place.workspace
    choice, shells, rules = shell.choice, shell.shells, policy.of_session
    source = sandbox_source(settings, environ)
    person_tools = person_tools_of(workspace, choice, shell.policy, source, shells, rules, environ)
    options = RuntimeOptions(
        tools=shaped.tools,
        limits=assembly.limits,
        approval=shaped.approval,
        mode=given.mode.value,
        hooks=hook_runner(
            assembly.hooks,
            workspace.root,
            can_ask=assembly.can_ask,
            callbacks=assembly.hook_callbacks,
        ),
        turn_end=turn_end(shaped.turn_ends),
        resolve=partial(_resolve, given),
        person_tools=person_tools,  # type: ignore[arg-type]  # a mapping, lazily
        attach=prompt_attach(workspace),
        allow_background_agents=bool(settings.allow_background_agents),
        # Where nobody answers approvals (`moot -p`), nobody sends messages either.
        person_replies=assembly.can_ask,
        model_titles=bool(settings.model_titles),
        commands=shaped.commands,
        snapshots=FileSnapshots(store, session_id, workspace.root),
        mcp=mcp,
        extra_instructions=assembly.append_system_prompt,
        gate=assembly.gate,
        before_request=ready,
        network=shell.network,
    )
    runtime = Runtime(shaped.agents, store=store, session_id=session_id, options=options)
    if shell.network is not None:
        shell.network.attach(runtime.record_session)
    return runtime


def _sitting(runtime: Runtime, assembly: SessionAssembly) -> None:
    """Step 7: a resumed session records where this sitting begins and what it runs with,
    then the switches the front end's choices make, each an op like any other."""
    mode, model = assembly.mode, assembly.model
    if assembly.resumed:
        # Before the switches its flags make.
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


def _mcp(given: _Given, place: _Place) -> McpManager | None:
    """The session's MCP servers, or None when nothing defines one."""
    if place.servers is None:
        return None
    from moot.mcp.session import session_mcp

    rules = given.assembly.rules
    return session_mcp(
        place.servers,
        place.workspace.root,
        given.environ,
        outputs_dir=outputs_dir(given.session_id),
        hidden=lambda name: tool_hidden(name, rules),
        allowed=given.assembly.allow_project_mcp,
        tool_search=given.settings.mcp_tool_search,
        roots=place.workspace.added_roots,  # the servers' roots: the workspace, then these
        asks=given.assembly.asks_mcp_questions,
    )
