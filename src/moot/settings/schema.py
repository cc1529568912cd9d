"""The settings' schema: what a settings file may hold, each key documented; what loading them
returns; their errors and warnings."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from moot.protocol.modes import ModeName
from moot.providers.catalog import CatalogEntry
from moot.settings.review import HeldSettings

SandboxName = Literal["auto", "bubblewrap", "landlock", "seatbelt", "docker", "none"]
"""The `sandbox` values (`moot.sandbox.select` reads them)."""


MAX_FILE_BYTES = 1 << 20
"""The largest settings file read (1 MiB); real ones are a few kilobytes."""


class SettingsError(ValueError):
    """A settings file that cannot be read or does not fit the schema; names the file."""


class SettingsWarning(msgspec.Struct, frozen=True):
    """A key a settings file holds that moot ignores; for the front end to show."""

    file: str
    """The settings file."""
    key: str
    """The key as written."""
    suggestion: str | None = None
    """The nearest key moot knows (dotted, e.g. `permissions.defaultMode`), if one is near."""

    def __str__(self) -> str:
        near = f'; did you mean "{self.suggestion}"?' if self.suggestion else ""
        return f'{self.file}: "{self.key}" is not a moot setting and is ignored{near}'


class Permissions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Which tool calls run, ask or are refused."""

    allow: list[str] = msgspec.field(default_factory=list)
    """Rules such as `Bash(npm run test:*)` or `Edit(src/**)` that run without asking."""
    ask: list[str] = msgspec.field(default_factory=list)
    """Rules that always ask, even when an allow rule or the mode would let the call run."""
    deny: list[str] = msgspec.field(default_factory=list)
    """Rules that are refused; a bare tool name removes the tool from the model's list."""
    default_mode: ModeName | None = msgspec.field(default=None, name="defaultMode")
    """The permission mode a session starts in."""


ScrollbackFormat = Literal["auto", "off", "text", "markdown"]
"""What the app prints to the terminal's scrollback as it exits: `auto` is `markdown` when it ran
without the alternate screen and `off` otherwise."""


class TerminalOptions(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How the app uses the terminal (the `ui` key); the command line's flags win."""

    alt_screen: bool = msgspec.field(default=True, name="altScreen")
    """Run on the alternate screen; false draws the app below the shell prompt (inline), so
    the terminal keeps its scrollback (`--no-alt-screen`)."""
    mouse: bool = True
    """Capture the mouse at start; false leaves selecting text to the terminal (`--no-mouse`;
    `f4` switches it either way)."""
    scrollback: ScrollbackFormat = "auto"
    """Print the conversation to the scrollback on exit (`--scrollback`)."""
    image_thumbnails: bool = msgspec.field(default=False, name="imageThumbnails")
    """Draw a thumbnail of each image a message attached, under its line in the chat: in the
    plain REPL on a terminal with a graphics protocol (kitty, iTerm2, sixel: from
    `TERM`/`TERM_PROGRAM`), in the app in half cells (`▀`, any terminal with colours)."""


class ReplSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How the plain REPL (`moot --plain`) looks."""

    toolbar: bool = True
    """The status toolbar under the prompt (model, mode, context, cost); `--no-toolbar` hides
    it for one run."""
    plain_output: bool = msgspec.field(default=False, name="plainOutput")
    """Whole lines only: no colour, no markdown styling, no live area, nothing redrawn while a
    turn runs (as with `TERM=dumb` or `NO_COLOR`)."""


class VerifySettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The commands the `lint` and `test` tools run instead of what they find in the project's
    files (`moot.tools.verify_find`). A repository's own are held until the person approves
    its settings file (`moot.settings.review`): they run commands."""

    lint: list[str] = msgspec.field(default_factory=list)
    """Lint command lines, run in turn (`["ruff check --output-format json ."]`)."""
    test: list[str] = msgspec.field(default_factory=list)
    """Test command lines, run in turn (`["pytest -x"]`)."""


class LanguageServerSetting(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    """One language's server (`lsp.<language>`: python, typescript, go, rust, c)."""

    command: str | None = None
    """The server's program: a name looked up on PATH (never inside the workspace) or a path;
    unset: the first default server found (`moot.lsp.servers.LANGUAGES`)."""
    args: list[str] | None = None
    """Its arguments; unset: the default server's (`--stdio` where it needs it)."""
    off: bool = False
    """No server for this language: edits report no diagnostics."""


class NetworkSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What a sandboxed command may reach through the session's proxy (`sandbox.network`);
    set at all, commands get the network through the proxy only (`moot.sandbox.net_proxy`)."""

    allowed_domains: list[str] = msgspec.field(default_factory=list, name="allowedDomains")
    """Hosts reached without asking: `pypi.org`, or `*.pypi.org` for every host below it.
    They add up across the files; a repository's are held until the person approves them."""
    denied_domains: list[str] = msgspec.field(default_factory=list, name="deniedDomains")
    """Hosts always refused, whatever is allowed or answered; they add up across the files."""


class SandboxSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The `sandbox` key as an object."""

    backend: SandboxName | None = None
    """What the `sandbox` key as a string says: `auto`, `bubblewrap`, `docker` or `none`."""
    network: NetworkSettings | None = None
    """Unset: commands have no network. Set (even `{}`): through the proxy, by these lists,
    and a host on neither is asked about (refused where nobody answers)."""


def sandbox_backend(settings: Settings) -> SandboxName | None:
    """The sandbox the settings name, the `sandbox` key a string or an object."""
    chosen = settings.sandbox
    return chosen.backend if isinstance(chosen, SandboxSettings) else chosen


def network_settings(settings: Settings) -> NetworkSettings | None:
    """The `sandbox.network` settings; None: commands have no network."""
    chosen = settings.sandbox
    return chosen.network if isinstance(chosen, SandboxSettings) else None


class Settings(msgspec.Struct, kw_only=True):
    """Everything a settings file may hold; another top-level key is ignored with a
    `SettingsWarning` (see the module docstring)."""

    model: str | None = None
    """The model to use, `provider/model`."""
    permissions: Permissions = msgspec.field(default_factory=Permissions)
    """Permission rules and the starting mode; the rule lists add up across the files."""
    sandbox: SandboxName | SandboxSettings | None = None
    """Where shell commands run (`none` runs them on the host, deliberately); or an object
    with that as `backend` and the network commands may reach (`network`)."""
    auto_commit: bool | None = msgspec.field(default=None, name="autoCommit")
    """Commit the files a turn changed at its end (`moot undo` takes it back)."""
    allow_git_hooks: bool | None = msgspec.field(default=None, name="allowGitHooks")
    """Let moot's own commits and branch switches run the repository's git hooks, on the host,
    as long as they are byte-identical to when the session began. Off by default: even an
    unchanged hook may run files the session can change (a lint-staged or pre-commit config)."""
    agents: list[str] | None = None
    """The agent definitions that join a session as peers, by name; all of them when unset
    (`--agents` overrides it)."""
    allow_background_agents: bool | None = msgspec.field(default=None, name="allowBackgroundAgents")
    """Let agents start background agents (`call_agent(background=true)`,
    `spawn_background_agent`) and message each other; off by default."""
    snapshot_max_bytes: Annotated[int, msgspec.Meta(ge=0)] | None = msgspec.field(
        default=None, name="snapshotMaxBytes"
    )
    """The largest file whose previous content is kept so a rewind can restore it (10 MiB
    when unset); a tool that changes a larger file says that a rewind will not restore it."""
    model_titles: bool | None = msgspec.field(default=None, name="modelTitles")
    """After a session's first turn, ask its model once for a short title (a tiny request
    outside the conversation, its cost in the ledger) instead of keeping the first prompt's
    first line; off by default, so no model call names a session."""
    auto_compact_at: Annotated[float, msgspec.Meta(gt=0, le=1)] | None = msgspec.field(
        default=None, name="autoCompactAt"
    )
    """Share of the model's context window past which the conversation is compacted before
    the next request (default 0.8)."""
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """Environment variables for the session: model keys and base URLs are read from them, and
    shell commands see them (secrets scrubbed); the process's own environment wins."""
    hooks: dict[str, Any] = msgspec.field(default_factory=dict)
    """Commands run on session events (PreToolUse, PostToolUse, ...)."""
    verify: VerifySettings = msgspec.field(default_factory=VerifySettings)
    """The lint and test commands (`verify.lint`, `verify.test`), when the project's files do
    not say them; merged by key."""
    ui: TerminalOptions = msgspec.field(default_factory=TerminalOptions)
    """How the app uses the terminal: `altScreen`, `mouse`, `scrollback`; merged by key."""
    models: dict[str, CatalogEntry] = msgspec.field(default_factory=dict)
    """Model catalog entries by `provider/model`, shaped as in `models.json` (`context_window`,
    `max_output`, prices per million tokens, `tools`/`images`/`thinking`): a new model, or some
    fields of a known one changed. They add up across the files, field by field."""
    repl: ReplSettings = msgspec.field(default_factory=ReplSettings)
    """How the plain REPL looks (`toolbar`, `plainOutput`)."""
    mcp_servers: dict[str, Any] = msgspec.field(default_factory=dict, name="mcpServers")
    """MCP servers by name (`command`, `args`, `env` or `type`, `url`, `headers`). Each file's
    are read on their own by `moot.mcp.config`: where a server is defined decides whether it
    needs the person's approval before it starts."""
    enable_all_project_mcp_servers: bool | None = msgspec.field(
        default=None, name="enableAllProjectMcpServers"
    )
    """In the user's settings only: start the repository's MCP servers without asking."""
    enabled_mcpjson_servers: list[str] = msgspec.field(
        default_factory=list, name="enabledMcpjsonServers"
    )
    """In the user's settings only: the repository's MCP servers to start without asking."""
    disabled_mcpjson_servers: list[str] = msgspec.field(
        default_factory=list, name="disabledMcpjsonServers"
    )
    """MCP servers not to start, from any file."""
    mcp_tool_search: Literal["auto", "always", "never"] | None = msgspec.field(
        default=None, name="mcpToolSearch"
    )
    """Send MCP tools' full schemas (`never` defer), only names and one line each with a
    search tool that loads them (`always`), or the first while they fit a budget (`auto`)."""
    lsp: dict[str, LanguageServerSetting] = msgspec.field(default_factory=dict)
    """Language servers by language (`command`, `args`, `off`): after an edit, the new errors
    they report are added to its result. Merged by language, then by field; a project file's
    `command` or `args` wait for the person's approval."""
    mcp_sampling_allowed: list[str] = msgspec.field(default_factory=list, name="mcpSamplingAllowed")
    """In the user's settings only: MCP servers whose requests for the session's model
    (sampling) run without asking, in every front end (`moot -p` and editors too); the others
    ask the person in the app and the REPL, and are refused elsewhere."""
    mcp_startup_wait: float | None = msgspec.field(default=None, name="mcpStartupWait")
    """Seconds a headless run or an editor's session waits for its MCP servers before its
    first model request; None: `MCP_TIMEOUT` (milliseconds), else 30."""
    resident: bool = False
    """In the user's settings only (`MOOT_RESIDENT=1`/`0` wins): start each `moot` as a fork of
    a resident process that has moot loaded (`moot.cli.resident`), started by the first `moot`
    and ended after 30 idle minutes. Read by `moot` before the settings load; Linux only."""


class LoadedSettings(Settings, kw_only=True):
    """The merged settings, with what loading them found out (`load_settings` returns one)."""

    warnings: tuple[SettingsWarning, ...] = ()
    """Keys the files hold that moot ignores, in file order."""
    origins: dict[str, str] = msgspec.field(default_factory=dict)
    """For each key the files set (`model`, `sandbox`, `permissions.defaultMode`, ...), the
    file whose value won."""
    held: tuple[HeldSettings, ...] = ()
    """The project files whose grants (hooks, `sandbox: "none"`, allow rules, a wide mode,
    `env`, ...) are left out until the person approves their content (`moot.settings.review`)."""


RuleKind = Literal["allow", "ask", "deny"]
