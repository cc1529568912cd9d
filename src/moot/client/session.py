"""A session assembled for a front end: what it is made of (`SessionAssembly`, the one options
value `client/assemble.py::open_session` takes) and what it is once made (`Session`: its
runtime, and what must end with it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.runtime import Runtime
from moot.permissions.rules import RuleSet
from moot.protocol.hook_callbacks import HookCallbacks
from moot.protocol.modes import PermissionMode
from moot.sandbox.background import BackgroundShells
from moot.sandbox.select import SandboxChoice
from moot.settings import Settings
from moot.settings.layers import ALL, SettingsLayers
from moot.workspace.paths import Workspace

if TYPE_CHECKING:
    from moot.client.briefing import Briefing
    from moot.client.facts import GitProbe
    from moot.client.mcp_ready import ServersReady
    from moot.client.session_rules import SessionRules
    from moot.client.session_tools import ServersOnDemand
    from moot.core.gate import TurnGate
    from moot.hooks import HookConfig
    from moot.mcp.manager import McpManager
    from moot.protocol.client import PromptPart
    from moot.protocol.client_tools import ClientTools
    from moot.protocol.editor import EditorBuffers, EditorTerminal
    from moot.protocol.mcp import McpServerConfig
    from moot.skills.guidance import Guidance


class SessionAssembly(msgspec.Struct, frozen=True, kw_only=True):
    """What a session is assembled from, besides its store, its id and its directory: what the
    front end chose and what was read for it. `settings`, `agent` and `rules` are required;
    every other field says its default."""

    settings: Settings
    """The merged settings (sandbox, default mode, `env`, models, hooks' trust). Required."""
    agent: Agent
    """The agent that answers the person. Required."""
    rules: RuleSet
    """The permission rules in force (`client.rules.session_rules`: the settings' and the
    front end's own). Required."""
    mode: PermissionMode | None = None
    """The permission mode the front end names (`--permission-mode`); None (the default) keeps
    the mode the session last switched to, or the settings' default."""
    model: str | None = None
    """The model the front end names (`--model`); None (the default) keeps the model the
    session last switched to (`model_changed`), else the agent's."""
    hooks: HookConfig | None = None
    """The settings' hooks (`client.environment.hook_config`); None (the default): none."""
    limits: Limits | None = None
    """Bounds for each run; None (the default): `Limits()`."""
    can_ask: bool = True
    """Someone answers approvals (the default); False (`moot -p`): what would ask is refused,
    and no agent waits for a message from the person."""
    asks_about_network: bool = False
    """The front end shows `network_access_requested` and answers it (`AnswerNetworkAccess`);
    False (the default): a host on neither `sandbox.network` list is refused, as where nobody
    answers (`can_ask` false)."""
    network_hosts: Mapping[str, str] | None = None
    """Host names the session's network proxy resolves to these addresses instead of asking
    the system (tests name their servers on 127.0.0.x so); None (the default): the system's."""
    asks_mcp_questions: bool = False
    """The front end puts MCP servers' questions (elicitation) to the person
    (`mcp_question_asked`, answered with `AnswerMcpQuestion`): the app and the REPL. Elsewhere
    the servers are not told they may ask."""
    auto_commit: bool = False
    """Commit the files each turn changed as it ends (`moot undo` takes it back); off by
    default."""
    allowed_tools: Sequence[str] = ()
    """The front end's own allow rules (already in `rules`), so that `/permissions` can say
    where each rule comes from; none by default."""
    disallowed_tools: Sequence[str] = ()
    """The front end's own deny rules, likewise; none by default."""
    guidance: Guidance | None = None
    """The skills, commands, agent definitions and memory read for the session
    (`moot.skills.guidance.load_guidance`): the prompts are rendered around them, the skill
    tool and the defined peers join, and `RunCommand`/`NoteToMemory` are answered from them.
    None (the default): the agent is used as given, and those ops are refused."""
    git_probe: GitProbe | None = None
    """The git status probe for the prompt, started once the session is assembled (its facts
    say the branch until then; `Session.settle_prompt` puts the status in); None (the
    default): the prompt runs git itself."""
    mcp_servers: Sequence[McpServerConfig] = ()
    """MCP servers the front end brings, besides those the files define; none by default."""
    strict_mcp: bool = False
    """Only the front end's MCP servers: none the files define (`--strict-mcp-config`)."""
    allow_project_mcp: Sequence[str] = ()
    """Repository MCP servers that may start without the person's approval this time (`*`:
    all of them); none by default."""
    mcp_late: Callable[[str], None] | None = None
    """Wait for the MCP servers before the first model request (`moot -p`, an editor, the
    SDK; `client/mcp_ready.py`) and tell this about each not ready in time. None (the
    default): nothing waits (the app and the REPL start with the cached tools)."""
    editor_buffers: EditorBuffers | None = None
    """The editor's text of files, for `read` (a front end in an editor); None (the default):
    the disk."""
    editor_terminal: EditorTerminal | None = None
    """The editor's terminal, which shell commands use when the person chooses it
    (`EditorTerminal.chosen`) instead of moot's sandbox; None (the default): the sandbox."""
    system_prompt: str | None = None
    """Replaces the person's agent's instructions as rendered (`--system-prompt`; "" leaves
    only its name); None (the default) keeps moot's own."""
    append_system_prompt: str = ""
    """Read by the person's agent with every request, after its instructions
    (`--append-system-prompt`); none by default."""
    client_tools: ClientTools | None = None
    """Tools the front end runs itself (an Agent SDK's in-process servers); none by default."""
    settings_layers: SettingsLayers = ALL
    """The settings layers `settings` was merged from, to read again when the files change
    (`--setting-sources`, `--settings`); all the files by default."""
    added_dirs: tuple[str, ...] = ()
    """Directories besides the workspace the file tools read and write, and commands in the
    sandbox (`--add-dir`; relative to the process's directory); none by default."""
    gate: TurnGate | None = None
    """The turn gate of every run (`--json-schema`'s); none by default."""
    hook_callbacks: HookCallbacks | None = None
    """The front end's own hooks, run with the settings' (an Agent SDK's callbacks); none by
    default."""
    resumed: bool = False
    """The session is a stored one opened again: its log records where this sitting begins
    (`session_resumed`). Off by default (a new session records none)."""


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
    mcp_ready: ServersReady | None = None
    """Waits for them once (`SessionAssembly.mcp_late`); None: nothing waits."""
    servers: ServersOnDemand | None = None
    """Its language servers, stopped with it (None: a session made without them)."""
    settle_prompt: Callable[[], None] | None = None
    """Puts the git status into the prompts, once, before the first op
    (`client/late_facts.py::LateGit.settle`); None: nothing is left to put in."""

    async def close(self) -> None:
        """End background shells, the MCP and language servers and the sandbox (a Docker
        container)."""
        if self.mcp is not None:
            await self.mcp.close()
        if self.servers is not None:
            await self.servers.close()
        await self.shells.close()
        if self.shell.sandbox is not None:
            await self.shell.sandbox.close()
