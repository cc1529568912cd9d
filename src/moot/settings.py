"""Settings: defaults, then user settings, then the project's, then the command line.

Precedence, highest first: command-line flags, `.moot/settings.local.json` (personal,
git-ignored), `.moot/settings.json` (committed), `<config dir>/settings.json`, defaults. The
shape follows the one widely used coding agents share (`permissions.allow/ask/deny`,
`permissions.defaultMode`, `hooks`, `env`, `model`), so rules people already have carry over.
Permission rule lists add up across the files, and so do hooks (by event), `env` (by variable)
and `models` (by model, then field); every other value is overridden by a higher one.

The schema is checked with msgspec, not pydantic: `moot -p` reads settings before anything
else, and pydantic alone costs several times what msgspec does to import.

Other agents' settings share these files, so a top-level key moot does not know is not an
error: `load_settings` returns a `SettingsWarning` for it (naming the file, the key and the
nearest key moot knows), and the front end shows it; nothing here prints. Inside `permissions`
and `models`, where a misspelt key would silently drop rules, an unknown key is an error.
A settings file is read only if it is a regular file of at most `MAX_FILE_BYTES` of UTF-8 JSON
(a repository could make it a FIFO, a device or a huge file).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TextIO, get_args

import msgspec

from moot import settings_review as review
from moot.protocol.modes import ModeName
from moot.providers.catalog import CatalogEntry
from moot.settings_review import SESSION_VARIABLES, HeldSettings

SandboxName = Literal["auto", "bubblewrap", "docker", "none"]
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


class ReplSettings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """How the plain REPL (`moot --plain`) looks."""

    toolbar: bool = True
    """The status toolbar under the prompt (model, mode, context, cost); `--no-toolbar` hides
    it for one run."""
    plain_output: bool = msgspec.field(default=False, name="plainOutput")
    """Whole lines only: no colour, no markdown styling, no live area, nothing redrawn while a
    turn runs (as with `TERM=dumb` or `NO_COLOR`)."""


class Settings(msgspec.Struct, kw_only=True):
    """Everything a settings file may hold; another top-level key is ignored with a
    `SettingsWarning` (see the module docstring)."""

    model: str | None = None
    """The model to use, `provider/model`."""
    permissions: Permissions = msgspec.field(default_factory=Permissions)
    """Permission rules and the starting mode; the rule lists add up across the files."""
    sandbox: SandboxName | None = None
    """Where shell commands run; `none` runs them on the host, deliberately."""
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


class LoadedSettings(Settings, kw_only=True):
    """The merged settings, with what loading them found out (`load_settings` returns one)."""

    warnings: tuple[SettingsWarning, ...] = ()
    """Keys the files hold that moot ignores, in file order."""
    origins: dict[str, str] = msgspec.field(default_factory=dict)
    """For each key the files set (`model`, `sandbox`, `permissions.defaultMode`, ...), the
    file whose value won."""
    held: tuple[HeldSettings, ...] = ()
    """The project files whose grants (hooks, `sandbox: "none"`, allow rules, a wide mode,
    `env`, ...) are left out until the person approves their content (`moot.settings_review`)."""


_UNCHECKED_KEYS = frozenset({"$schema"})
"""Top-level keys that are no setting of any agent (an editor's JSON schema reference)."""

_CHOICES: dict[str, Any] = {
    "sandbox": SandboxName,
    "permissions.defaultMode": ModeName,
    "ui.scrollback": ScrollbackFormat,
}
"""The closed sets by key path, to list in the message when a value is not one of them."""
_KEYS: dict[str, type[msgspec.Struct]] = {
    "permissions": Permissions,
    "models.*": CatalogEntry,
    "ui": TerminalOptions,
    "repl": ReplSettings,
}
"""The objects that refuse unknown keys by key path (`*`: any key of a dictionary), to list the
keys they take."""
_JSON_TYPES = {
    type(None): "null",
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    list: "array",
    dict: "object",
}
"""The names msgspec's messages give JSON values ("got `int`")."""


# The `MOOT_*` variables a settings file's `env` may set are read per session, from the
# session's environment; the others shape the process before any settings file is read.
_FROM_SHELL = "moot reads this before the settings; set it in the shell"
_NOT_FROM_ENV = {
    "MOOT_MODEL": "use the `model` key",
    "MOOT_SANDBOX": "use the `sandbox` key",
    "MOOT_AUTO_COMMIT": "use the `autoCommit` key",
}


def _validate(data: dict[str, Any], source: object) -> Settings:
    """`data` as `Settings`, or a `SettingsError` naming `source` and the offending key path."""
    # Other top-level keys are allowed (other agents' settings share the file), so a key
    # spelled the Python way would be ignored without a word: refuse it, naming the right one.
    for field in msgspec.structs.fields(Settings):
        if field.name != field.encode_name and field.name in data:
            raise SettingsError(f"{source}: {field.name}: did you mean {field.encode_name}?")
    env = data.get("env")
    for name in env if isinstance(env, dict) else ():
        if name.startswith("MOOT_") and name not in SESSION_VARIABLES:
            raise SettingsError(f"{source}: env.{name}: {_NOT_FROM_ENV.get(name, _FROM_SHELL)}")
    try:
        # Lax: "true", "false", 1 and 0 are read as booleans, "5" as a number.
        return msgspec.convert(data, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"{source}: {_problem(str(exc), data)}") from None


def _problem(message: str, data: dict[str, Any]) -> str:
    """msgspec's "Expected `str`, got `int` - at `$.permissions.allow[1]`" as
    "permissions.allow[1]: Expected `str`, got `int`", with the choices or keys missed."""
    message, _, at = message.rpartition(" - at `")
    if not message:  # the value as a whole, which `_read` has already checked is an object
        return at
    at = at.rstrip("`")
    where = _key_path(at, message, data)
    if unknown := re.fullmatch(r"Object contains unknown field `(.*)`", message):
        struct = _KEYS.get(at.removeprefix("$.").replace("[...]", ".*"))
        keys = [f.encode_name for f in msgspec.structs.fields(struct)] if struct else []
        near = _nearest(unknown[1], keys)
        mean = f"; did you mean {near[0]}?" if near else ""
        takes = f" (it takes {', '.join(keys)})" if keys else ""
        return f"{where}.{unknown[1]}: not a known key{takes}{mean}"
    if where in _CHOICES and message.startswith("Invalid enum value"):
        message += f"; expected one of {', '.join(get_args(_CHOICES[where]))}"
    return f"{where}: {message}"


def _key_path(at: str, message: str, data: dict[str, Any]) -> str:
    """`$.permissions.allow[1]` as `permissions.allow[1]`. For a value in a dictionary msgspec
    writes `$.env[...]`; the key is then the first one whose value (or what the rest of the path
    names inside it) is what the message is about: a value of the type it complains about, or an
    object with the unknown field (the values are checked in order, and all of one kind fail
    alike)."""
    got = re.search(r"got `(\w+)`", message)
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", message)
    steps: list[tuple[str, str]] = re.findall(r"\.([^.\[]+)|\[([^\]]*)\]", at)

    def fits(node: object) -> bool:
        if got:
            return _JSON_TYPES.get(type(node)) == got[1]
        return not unknown or (isinstance(node, dict) and unknown[1] in node)

    def walk(node: object, steps: list[tuple[str, str]]) -> str | None:
        if not steps:
            return "" if fits(node) else None
        (name, index), rest = steps[0], steps[1:]
        if index == "..." and isinstance(node, dict):
            for key, value in node.items():
                if (tail := walk(value, rest)) is not None:
                    return f".{key}{tail}"
            return None
        if name:
            child = node.get(name) if isinstance(node, dict) else None
            step = f".{name}"
        else:
            listed = isinstance(node, list) and index.isdigit() and int(index) < len(node)
            child = node[int(index)] if listed else None  # type: ignore[index]
            step = f"[{index}]"
        tail = walk(child, rest)
        return None if tail is None else step + tail

    found = walk(data, steps)
    if found is None:  # nothing fits: name the path as msgspec gives it
        found = "".join(f".{name}" if name else f"[{index}]" for name, index in steps)
    return found.removeprefix(".")


def settings_files(project: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The settings files in order of rising precedence."""
    from moot.paths import config_dir

    return [
        config_dir(environ) / "settings.json",
        project / ".moot" / "settings.json",
        project / ".moot" / "settings.local.json",
    ]


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes; None when there is no file. Only a regular file (a symlink to one is
    fine) of at most `MAX_FILE_BYTES` is read: opening a FIFO would wait for a writer forever,
    and a device or a huge file would never end."""
    try:
        # Non-blocking, so that opening a FIFO returns at once; a regular file ignores it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise SettingsError(f"cannot read {path}: it is a directory, not a settings file")
        if not stat.S_ISREG(mode):
            raise SettingsError(f"cannot read {path}: it is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise SettingsError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB: not settings")
    return data


def _parse(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise SettingsError(f"{path} is not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    _validate(data, path)
    return data


def _read(path: Path) -> dict[str, Any]:
    raw = _read_bytes(path)
    return {} if raw is None else _parse(path, raw)


def _known_keys() -> dict[str, str]:
    """Every key moot reads, by the name a person might write for it: top-level keys as they
    are, nested ones dotted and by their own name (`defaultMode` -> `permissions.defaultMode`)."""
    known = {f.encode_name: f.encode_name for f in msgspec.structs.fields(Settings)}
    for field in msgspec.structs.fields(Permissions):
        dotted = f"permissions.{field.encode_name}"
        known[dotted] = dotted
        known.setdefault(field.encode_name, dotted)
    return known


def _nearest(key: str, candidates: Iterable[str]) -> list[str]:
    """The candidate nearest to `key`, if one is near (as a list: empty when none is)."""
    import difflib  # only for a key moot does not know: `moot -p` starts without it

    return difflib.get_close_matches(key, list(candidates), n=1)


def unknown_keys(data: Mapping[str, Any], path: object) -> list[SettingsWarning]:
    """A warning for each top-level key of a settings file that moot does not read."""
    if not data:  # most layers are absent files: no schema walk (it is on the app's start-up)
        return []
    known = _known_keys()
    top_level = {f.encode_name for f in msgspec.structs.fields(Settings)} | _UNCHECKED_KEYS
    warnings = []
    for key in data:
        if key in top_level:
            continue
        near = _nearest(key, known)
        warnings.append(SettingsWarning(str(path), key, known[near[0]] if near else None))
    return warnings


def merge(layers: list[dict[str, Any]]) -> Settings:
    """Later layers win; permission rule lists add up (without duplicates), and so do the
    hooks of each event: a project's `PreToolUse` hooks run besides the user's, not instead.
    `env` merges by variable, `ui` and `repl` by key, `models` by model and then by field.

    Raises:
        SettingsError: the merged settings do not fit the schema (named as `settings`).
    """
    merged: dict[str, Any] = {}
    rules: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    mode = None
    for layer in layers:
        for key, value in layer.items():
            if key == "permissions":
                for kind in rules:
                    rules[kind] += [r for r in value.get(kind, ()) if r not in rules[kind]]
                mode = value.get("defaultMode", mode)
            elif key == "hooks" and isinstance(value, dict):
                hooks = merged.setdefault("hooks", {})
                for event, groups in value.items():
                    before = hooks.get(event)
                    if isinstance(before, list) and isinstance(groups, list):
                        hooks[event] = [*before, *(g for g in groups if g not in before)]
                    else:
                        hooks[event] = groups  # a malformed value: the hook parser names it
            elif key in ("env", "ui", "repl") and isinstance(value, dict):
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "models" and isinstance(value, dict):
                models = merged.setdefault("models", {})
                for name, entry in value.items():
                    before = models.get(name)
                    both = isinstance(before, dict) and isinstance(entry, dict)
                    models[name] = {**before, **entry} if both else entry
            else:
                merged[key] = value
    merged["permissions"] = {**rules, "defaultMode": mode}
    return _validate(merged, "settings")


_ORIGIN_KEYS = ("model", "sandbox", "autoCommit")


def load_settings(project: Path, environ: Mapping[str, str] | None = None) -> LoadedSettings:
    """The merged settings for a project directory, with what loading them found out: keys
    moot ignores (`warnings`), which file each value came from, and the project files whose
    grants are held until the person approves them (`held`, see `moot.settings_review`).

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
    """
    files = settings_files(project, environ)
    raws = [_read_bytes(path) for path in files]
    layers = [
        {} if raw is None else _parse(path, raw) for path, raw in zip(files, raws, strict=True)
    ]
    warnings = [
        w for path, layer in zip(files, layers, strict=True) for w in unknown_keys(layer, path)
    ]
    held: list[HeldSettings] = []
    for index in (1, 2):  # the project's files: a repository can ship either
        if raw := raws[index]:
            layers[index], holding = _review(project, files[index], raw, layers[index], environ)
            held += holding
    merged = merge(layers)
    origins: dict[str, str] = {}
    for path, layer in zip(files, layers, strict=True):
        for key in _ORIGIN_KEYS:
            if key in layer:
                origins[key] = str(path)
        if isinstance(layer.get("permissions"), dict) and "defaultMode" in layer["permissions"]:
            origins["permissions.defaultMode"] = str(path)
    fields = {name: getattr(merged, name) for name in merged.__struct_fields__}
    return LoadedSettings(**fields, warnings=tuple(warnings), origins=origins, held=tuple(held))


def _review(
    project: Path, path: Path, raw: bytes, layer: dict[str, Any], environ: Mapping[str, str] | None
) -> tuple[dict[str, Any], list[HeldSettings]]:
    """A project file's layer as it takes effect: whole if it grants nothing or the person
    approved this content here, else without its grants (and the file named as held)."""
    found = review.grants(layer)
    if not found:
        return layer, []
    digest = review.digest(raw)
    if review.SettingsApprovals(environ).approved(project, path, digest):
        return layer, []
    return review.held_out(layer), [HeldSettings(str(path), digest, tuple(found))]


_TOLD: set[tuple[str, str]] = set()
"""The (file, key) warnings this process has printed: a person is told once per process."""


def print_warnings(warnings: Iterable[SettingsWarning], stream: TextIO | None = None) -> None:
    """Print each warning not printed before in this process, as `moot: <warning>`, to
    `stream` (stderr when None). Front ends with a screen show `LoadedSettings.warnings`
    themselves."""
    for warning in warnings:
        if (warning.file, warning.key) not in _TOLD:
            _TOLD.add((warning.file, warning.key))
            print(f"moot: {warning}", file=stream or sys.stderr)


RuleKind = Literal["allow", "ask", "deny"]


def local_settings_file(project: Path) -> Path:
    """`.moot/settings.local.json`: personal, git-ignored; where moot itself writes rules."""
    return project / ".moot" / "settings.local.json"


def rule_sources(
    project: Path, environ: Mapping[str, str] | None = None
) -> list[tuple[RuleKind, str, Path]]:
    """Every permission rule in force with the file it comes from, in order of rising
    precedence (a rule in two files is listed twice); a project file's allow rules only once
    the person approved it (`moot.settings_review`).

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
    """
    found: list[tuple[RuleKind, str, Path]] = []
    for index, path in enumerate(settings_files(project, environ)):
        raw = _read_bytes(path)
        data = {} if raw is None else _parse(path, raw)
        if index and raw:
            data, _held = _review(project, path, raw, data, environ)
        permissions = data.get("permissions") or {}
        for kind in ("allow", "ask", "deny"):
            found += [(kind, rule, path) for rule in permissions.get(kind, ())]
    return found


def remove_local_rule(project: Path, kind: RuleKind, rule: str) -> bool:
    """Take a permission rule out of `.moot/settings.local.json`; False when it is not there.
    Other keys of the file are kept as they are."""
    path = local_settings_file(project)
    before = _read_bytes(path)
    data = {} if before is None else _parse(path, before)
    listed = (data.get("permissions") or {}).get(kind) or []
    if rule not in listed:
        return False
    listed.remove(rule)
    _write(project, path, data, before)
    return True


def _write(project: Path, path: Path, data: dict[str, Any], before: bytes | None) -> None:
    """Replace `path` with `data` through a fresh temporary file beside it: never through a
    name the repository could have planted (a `.tmp` symlink), and never half-written. The new
    content stays approved if `before` was (`settings_review.keep_approval`).

    Raises:
        SettingsError: The directory holding it is a symlink.
    """
    directory = path.parent
    if directory.is_symlink():
        raise SettingsError(f"{directory} is a symlink; moot does not write settings through it")
    import tempfile  # only when a rule is saved or removed

    after = (json.dumps(data, indent=2) + "\n").encode()
    fd, temp = tempfile.mkstemp(prefix=".settings.local-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(after)
        os.chmod(temp, 0o644)  # as a file the person wrote would be, not mkstemp's 0600
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    review.keep_approval(project, path, before, after)


def save_local_rule(project: Path, kind: RuleKind, rule: str) -> Path:
    """Add a permission rule to `.moot/settings.local.json` (an "approve always" answer).

    The file is personal: the repository's `.git/info/exclude` names it (`keep_out_of_git`),
    so git ignores it without a file git would show. Other keys of the file are kept as they
    are. `.moot/` comes with the repository, so nothing is written through a link it holds: a
    `.moot` that is a symlink is refused, and the new content goes to a fresh temporary file
    that then replaces the old one.

    Raises:
        SettingsError: The file cannot be read, or `.moot` is a symlink.
    """
    path = local_settings_file(project)
    directory = path.parent
    if directory.is_symlink():
        raise SettingsError(f"{directory} is a symlink; moot does not write settings through it")
    before = _read_bytes(path)
    data = {} if before is None else _parse(path, before)
    permissions = data.setdefault("permissions", {})
    listed = permissions.setdefault(kind, [])
    if rule not in listed:
        listed.append(rule)
    directory.mkdir(parents=True, exist_ok=True)
    _write(project, path, data, before)
    keep_out_of_git(project, "/.moot/settings.local.json")
    return path


def keep_out_of_git(project: Path, pattern: str) -> bool:
    """Name `pattern` in the repository's `.git/info/exclude`: git then ignores a personal
    file without a file of moot's own that `git status` would show (a `.moot/.gitignore` was
    one). Nothing happens outside a git repository, or when the line is there already.

    The repository could have planted links: every step is opened without following one, so
    nothing is ever written outside its own `.git`. Returns whether the line was added.
    """
    common = _git_common_dir(project)
    if common is None:
        return False
    nofollow = os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        git_fd = os.open(common, os.O_RDONLY | os.O_DIRECTORY | nofollow)
    except OSError:
        return False
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir("info", 0o755, dir_fd=git_fd)
        info_fd = os.open("info", os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=git_fd)
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | nofollow
            with os.fdopen(os.open("exclude", flags, 0o644, dir_fd=info_fd), "r+") as file:
                text = file.read()
                if pattern in text.splitlines():
                    return False
                file.write(("" if not text or text.endswith("\n") else "\n") + pattern + "\n")
                return True
        finally:
            os.close(info_fd)
    except OSError:
        return False  # a link where a directory should be, a read-only .git: left as it is
    finally:
        os.close(git_fd)


def _git_common_dir(project: Path) -> Path | None:
    """The repository's own git directory (a linked worktree's common one), read from the
    files git writes, without running git."""
    dot_git = project / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git
    try:
        head = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("gitdir:"):
        return None
    gitdir = (project / head.removeprefix("gitdir:").strip()).resolve()
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gitdir
    return (gitdir / common).resolve()


def save_user_setting(key: str, value: object, environ: Mapping[str, str] | None = None) -> Path:
    """Set one top-level key of the user settings (`<config dir>/settings.json`), keeping the
    file's other keys as they are; the model the app's first-run screen picks, say.

    Raises:
        SettingsError: The file is unreadable or not a JSON object, or the value does not fit
            the schema (nothing is written then).
    """
    from moot.paths import config_dir

    path = config_dir(environ) / "settings.json"
    data = _read(path)
    data[key] = value
    _validate(data, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temp, path)
    return path


def approve_held(
    project: Path, environ: Mapping[str, str] | None = None
) -> tuple[HeldSettings, ...]:
    """Approve the content the project's settings files have now (`moot trust --yes`): their
    grants take effect in sessions opened from now on. Returns what was held.

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
        OSError: The approvals cannot be written.
    """
    held = load_settings(project, environ).held
    approvals = review.SettingsApprovals(environ)
    for file in held:
        approvals.approve(project, file)
    return held
