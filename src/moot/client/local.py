"""`open_client`: a session this process runs, opened for a front end, as a `LocalClient` (the
client surface over it, `client/local_client.py`).

`open_client` does what every front end needs before its first op: read the settings, check
the model and the rules, open the store, create or find the session and assemble it
(`moot.client.assemble.open_session`). Each step that can fail raises `SetupError` with a message
for the person, before anything is written, so a bad model name never leaves an empty session.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from moot.client.assemble import open_session
from moot.client.environment import hook_config, session_environ
from moot.client.errors import SetupError, StoreError
from moot.client.facts import GitProbe
from moot.client.local_client import LocalClient, discard_if_empty
from moot.client.rules import session_rules
from moot.client.session import Session, SessionAssembly
from moot.client.stored import open_queries, open_upkeep
from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.session import recorded_agents, recorded_model
from moot.permissions.rules import RuleSet
from moot.protocol.client_tools import ClientTools
from moot.protocol.editor import EditorBuffers, EditorTerminal
from moot.protocol.hook_callbacks import HookCallbacks
from moot.protocol.mcp import McpServerConfig
from moot.protocol.modes import PermissionMode
from moot.providers.registry import UnknownModel, resolve_model
from moot.settings import LoadedSettings, Settings, SettingsError, load_settings
from moot.settings.layers import SettingsLayers
from moot.settings.load import chosen_layers
from moot.store.base import Store

__all__ = ["LocalClient", "SessionOptions", "open_client", "open_queries", "open_upkeep"]

AGENT = "moot"
"""The name of the agent that answers the person."""

if TYPE_CHECKING:
    from moot.core.gate import TurnGate
    from moot.hooks import HookConfig
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
    asks_about_network: bool = False
    """The front end shows `network_access_requested` and answers it (`AnswerNetworkAccess`);
    False: a host on neither `sandbox.network` list is refused."""
    network_hosts: Mapping[str, str] | None = None
    """Host names the network proxy resolves to these addresses (tests); None: the system's."""
    asks_mcp_questions: bool = False
    """The front end puts MCP servers' questions (elicitation) to the person
    (`mcp_question_asked`, answered with `AnswerMcpQuestion`): the app and the REPL. Elsewhere
    the servers are not told they may ask."""
    auto_commit: bool | None = None
    """Commit what each turn changed as it ends; None: `MOOT_AUTO_COMMIT`, else the settings."""
    read_files: bool = True
    """Read skills, custom commands, agent definitions and memory (and render the system
    prompt around them); False gives the bare agent, for tests of other things."""
    mcp_servers: Sequence[McpServerConfig] = ()
    """MCP servers the front end brings (an editor's, over ACP), besides the files' own."""
    allow_project_mcp: Sequence[str] = ()
    """Repository MCP servers that may start without the person's approval (`*`: all)."""
    mcp_late: Callable[[str], None] | None = None
    """Wait for the MCP servers before the first request, telling this what was late."""
    editor_buffers: EditorBuffers | None = None
    """The editor's text of files (unsaved changes included), for `read`; None: the disk."""
    editor_terminal: EditorTerminal | None = None
    """The editor's terminal, for shell commands when the person chooses it over the sandbox."""
    agents: Sequence[str] | None = None
    """The agent definitions that join as peers (`--agents`); the settings' `agents`, else all,
    when None."""
    tools: Sequence[str] | None = None
    """The only tools the person's agent is offered (`--tools`; `call_agent` to call peers);
    all of them when None."""
    max_cost_usd: float | None = None
    """Stop a run that has spent this much (`--max-budget-usd`)."""
    system_prompt: str | None = None
    """Replaces moot's own instructions to the person's agent (`--system-prompt`)."""
    append_system_prompt: str = ""
    """Added to the person's agent's instructions (`--append-system-prompt`)."""
    hook_callbacks: HookCallbacks | None = None
    """The front end's own hooks (an Agent SDK's callbacks), besides the settings'."""
    new_session_id: str | None = None
    """The id a new session takes (`--session-id`); a fresh `ses_...` when None."""
    client_tools: ClientTools | None = None
    """Tools the front end runs itself (an Agent SDK's in-process MCP servers)."""
    strict_mcp: bool = False
    """Only `mcp_servers`, none from the files (`--strict-mcp-config`)."""
    answer_schema: dict[str, Any] | None = None
    """The JSON Schema the person's agent's answers must fit (`--json-schema`)."""
    settings: str | None = None
    """One more settings layer over the files, JSON or a file's path (`--settings`)."""
    setting_sources: Sequence[str] | None = None
    """The settings files read: `user`, `project`, `local`; all when None."""
    add_dirs: Sequence[str] = ()
    """Directories besides the workspace the file tools read and write (`--add-dir`)."""


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
    git = GitProbe(Path(os.path.realpath(cwd))) if options.read_files else None
    early = git is not None and git.small()
    if git is not None and early:  # git answers at once: it overlaps the set-up
        _start(git)
    try:
        settings, layers = _settings(options)
        hooks = hook_config(settings, cwd)
    except SettingsError as exc:  # HookConfigError included
        raise SetupError(str(exc)) from None
    if options.session_id is not None and store is None and not options.model:
        store = _open_store()
    created: str | None = None
    try:
        model = _session_model(options, settings, store)
        if store is None:
            store = _open_store()
        if options.session_id is not None and store.session(options.session_id) is None:
            raise SetupError(f"no session {options.session_id!r}")
        rules = session_rules(settings, options.allowed_tools, options.disallowed_tools)
        # The runtime gets the name, not the provider: it resolves names itself and moves a
        # scripted provider past the turns a resumed session has already played.
        given = None if options.tools is None else tuple(options.tools)
        agent = Agent(
            AGENT, role="coding agent", instructions=INSTRUCTIONS, model=model, given_tools=given
        )
        guidance = _guidance(cwd, agent.name, rules) if options.read_files else None
        told: tuple[str, ...] = ()
        if guidance is not None:
            guidance, told = _session_roster(guidance, options, settings, store)
        limits = _limits(options, settings)
        session_id = options.session_id
        if session_id is None:
            session_id = created = _created(store, options, cwd)
        assembly = _assembly(options, settings, layers, agent, rules, hooks, limits, guidance, git)
        session = open_session(store, session_id, cwd, assembly)
        if git is not None and not early:  # only now: its work would slow the set-up
            _start(git)
    except BaseException:
        if store is not None:
            if created is not None:  # nothing is left of a session that could not be opened
                with contextlib.suppress(StoreError):  # what failed first is what is told
                    discard_if_empty(store, created)
            store.close()
        raise
    notices = (*_notices(settings, cwd), *_held_commands(session, cwd), *told)
    return LocalClient(session, store, settings, notices)


def _assembly(
    options: SessionOptions,
    settings: Settings,
    layers: SettingsLayers,
    agent: Agent,
    rules: RuleSet,
    hooks: HookConfig | None,
    limits: Limits,
    guidance: Guidance | None,
    git: GitProbe | None,
) -> SessionAssembly:
    """What `open_session` builds the session from: the front end's choices and the settings'."""
    mode = options.permission_mode
    return SessionAssembly(
        settings=settings,
        agent=agent,
        rules=rules,
        mode=PermissionMode(mode) if mode else None,
        model=options.model,
        hooks=hooks,
        limits=limits,
        can_ask=options.can_ask,
        asks_about_network=options.asks_about_network,
        network_hosts=options.network_hosts,
        asks_mcp_questions=options.asks_mcp_questions,
        auto_commit=_auto_commit(options, settings),
        allowed_tools=options.allowed_tools,
        disallowed_tools=options.disallowed_tools,
        guidance=guidance,
        git_probe=git,
        mcp_servers=options.mcp_servers,
        allow_project_mcp=options.allow_project_mcp,
        mcp_late=options.mcp_late,
        editor_buffers=options.editor_buffers,
        editor_terminal=options.editor_terminal,
        resumed=options.session_id is not None,
        system_prompt=options.system_prompt,
        append_system_prompt=_appended(options),
        hook_callbacks=options.hook_callbacks,
        gate=_gate(options),
        strict_mcp=options.strict_mcp,
        client_tools=options.client_tools,
        settings_layers=layers,
        added_dirs=tuple(options.add_dirs),
    )


def _settings(options: SessionOptions) -> tuple[LoadedSettings, SettingsLayers]:
    """The settings of the workspace, from the layers the front end chose (`--settings`,
    `--setting-sources`; a relative `--settings` path is the process's own directory's).

    Raises:
        SettingsError: They cannot be read, or do not fit the schema.
    """
    layers = chosen_layers(options.setting_sources, options.settings, Path.cwd())
    return load_settings(options.cwd, chosen=layers), layers


def _created(store: Store, options: SessionOptions, cwd: Path) -> str:
    """A new session's id, the front end's own if it names one.

    Raises:
        SetupError: A session with that id exists already.
    """
    try:
        info = store.create_session(
            title=options.title, workspace=str(cwd), session_id=options.new_session_id
        )
    except ValueError:
        raise SetupError(
            f"session {options.new_session_id} exists; go on with it with --resume"
        ) from None
    return info.id


def _appended(options: SessionOptions) -> str:
    """What the person's agent reads after its instructions: the front end's, the schema."""
    if options.answer_schema is None:
        return options.append_system_prompt
    from moot.client.answer_schema import schema_instructions

    schema = schema_instructions(options.answer_schema)
    return f"{options.append_system_prompt}\n\n{schema}".strip()


def _gate(options: SessionOptions) -> TurnGate | None:
    if options.answer_schema is None:
        return None
    from moot.client.answer_schema import schema_gate

    return schema_gate(options.answer_schema, AGENT)


def _session_model(options: SessionOptions, settings: Settings, store: Store | None) -> str:
    """The model a session opens with, checked before any session exists (and before a new
    sessions database is made): a bad name, script or missing key is a usage error.

    The model belongs to the session: a resumed one goes on with the model it last switched
    to, unless the front end names another.

    Raises:
        SetupError: No model, or one that cannot be used; the message says what to do.
    """
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
        resolve_model(model, session_environ(settings), models=settings.models)
    except UnknownModel as exc:
        if model == recorded and not options.model:
            raise SetupError(_gone_model(model, str(exc), settings)) from None
        raise SetupError(str(exc)) from None
    return model


def _limits(options: SessionOptions, settings: Settings) -> Limits:
    """The session's limits: the front end's turns, the settings' compaction point."""
    limits = Limits(max_turns=options.max_turns) if options.max_turns else Limits()
    if options.max_cost_usd is not None:
        limits = msgspec.structs.replace(limits, max_cost_usd=options.max_cost_usd)
    if settings.auto_compact_at is not None:
        limits = msgspec.structs.replace(limits, compact_at=settings.auto_compact_at)
    return limits


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
    (`moot.settings.review`)."""
    return (*(str(warning) for warning in settings.warnings), *(str(h) for h in settings.held))


def _held_commands(session: Session, cwd: Path) -> tuple[str, ...]:
    """The repository's skills and commands whose `allowed-tools` wait for the person."""
    if session.briefing is None:
        return ()
    from moot.client.trust import held_commands

    return tuple(str(h) for h in held_commands(cwd, guidance=session.briefing.guidance))


def _start(git: GitProbe) -> None:
    with contextlib.suppress(RuntimeError):  # no thread could be started: the prompt says so
        git.start()


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
