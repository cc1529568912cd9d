"""Settings: defaults, then user settings, then the project's, then the command line.

Precedence, highest first: command-line flags, `.moot/settings.local.json` (personal,
git-ignored), `.moot/settings.json` (committed), `<config dir>/settings.json`, defaults. The
shape follows the one widely used coding agents share (`permissions.allow/ask/deny`,
`permissions.defaultMode`, `hooks`, `env`, `model`), so rules people already have carry over.
Permission rule lists add up across the files, and so do hooks (by event), `env` (by variable)
and `models` (by model, then field); every other value is overridden by a higher one.

The schema is checked with msgspec, not pydantic: `moot -p` reads settings before anything
else, and pydantic alone costs several times what msgspec does to import.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

import msgspec

from moot.protocol.modes import ModeName
from moot.providers.catalog import CatalogEntry

SandboxName = Literal["auto", "bubblewrap", "docker", "none"]
"""The `sandbox` values (`moot.sandbox.select` reads them)."""


class SettingsError(ValueError):
    """A settings file that cannot be read or does not fit the schema; names the file."""


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


class Settings(msgspec.Struct, kw_only=True):
    """Everything a settings file may hold; other top-level keys are allowed and ignored."""

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
    env: dict[str, str] = msgspec.field(default_factory=dict)
    """Environment variables for the session: model keys and base URLs are read from them, and
    shell commands see them (secrets scrubbed); the process's own environment wins."""
    hooks: dict[str, Any] = msgspec.field(default_factory=dict)
    """Commands run on session events (PreToolUse, PostToolUse, ...)."""
    models: dict[str, CatalogEntry] = msgspec.field(default_factory=dict)
    """Model catalog entries by `provider/model`, shaped as in `models.json` (`context_window`,
    `max_output`, prices per million tokens, `tools`/`images`/`thinking`): a new model, or some
    fields of a known one changed. They add up across the files, field by field."""
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


_CHOICES: dict[str, Any] = {"sandbox": SandboxName, "permissions.defaultMode": ModeName}
"""The closed sets by key path, to list in the message when a value is not one of them."""
_KEYS: dict[str, type[msgspec.Struct]] = {"permissions": Permissions, "models.*": CatalogEntry}
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


SESSION_VARIABLES = frozenset(
    {"MOOT_CONNECT_TIMEOUT", "MOOT_READ_TIMEOUT", "MOOT_REASONING_EFFORT"}
)
"""The `MOOT_*` variables a settings file's `env` may set: they are read per session, from the
session's environment. The others shape the process before any settings file is read."""
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
        takes = f" (it takes {', '.join(keys)})" if keys else ""
        return f"{where}.{unknown[1]}: not a known key{takes}"
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


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    _validate(data, path)
    return data


def merge(layers: list[dict[str, Any]]) -> Settings:
    """Later layers win; permission rule lists add up (without duplicates), and so do the
    hooks of each event: a project's `PreToolUse` hooks run besides the user's, not instead.
    `env` merges by variable, `models` by model and then by field.

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
            elif key == "env" and isinstance(value, dict):
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


def load_settings(project: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """The merged settings for a project directory.

    Raises:
        SettingsError: a file is unreadable, not JSON, or does not fit the schema.
    """
    return merge([_read(path) for path in settings_files(project, environ)])


def save_local_rule(project: Path, kind: Literal["allow", "ask", "deny"], rule: str) -> Path:
    """Add a permission rule to `.moot/settings.local.json` (an "approve always" answer).

    The file is personal and git-ignored: a `.moot/.gitignore` naming it is written when none
    exists. Other keys of the file are kept as they are.
    """
    path = project / ".moot" / "settings.local.json"
    data = _read(path)
    permissions = data.setdefault("permissions", {})
    listed = permissions.setdefault(kind, [])
    if rule not in listed:
        listed.append(rule)
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("settings.local.json\n", encoding="utf-8")
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temp, path)
    return path
