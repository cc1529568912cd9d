"""Which MCP servers a session has: `.mcp.json` and the settings files, in the shape other
agents use.

```json
{"mcpServers": {
  "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
             "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
  "docs": {"type": "http", "url": "https://example.com/mcp",
           "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}
```

The files, lowest precedence first (a later one's server of the same name wins): the user's
`<config dir>/settings.json` (origin `user`), the workspace's `.mcp.json` and
`.moot/settings.json` (`project`), and `.moot/settings.local.json` (`local`). Only the user's
own servers start without asking: the others come with the repository, and a stdio server runs
a command on this machine (see `moot.mcp.approvals`). `${VAR}` and `${VAR:-default}` are
expanded in the command, its arguments, `env`, `cwd`, the URL and the headers, from the
session's environment; a server that names an unset variable is listed with the problem and
never started. Besides the shared keys, a server may set `timeout` (seconds one call may take,
120 by default) and `startupTimeout` (30).

The user's settings may also hold `enableAllProjectMcpServers` (start every project server
without asking) and `enabledMcpjsonServers` (these names); any file may turn servers off with
`disabledMcpjsonServers`. A repository's own files cannot approve its servers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from moot.mcp.files import ConfigFileError, read_object
from moot.mcp.names import valid_server_name
from moot.protocol.mcp import McpServerConfig, Origin, Transport

SERVERS_KEY = "mcpServers"
ENABLE_ALL_KEY = "enableAllProjectMcpServers"
ENABLED_KEY = "enabledMcpjsonServers"
DISABLED_KEY = "disabledMcpjsonServers"
SAMPLING_KEY = "mcpSamplingAllowed"
DEFAULT_TIMEOUT_S = 120.0
DEFAULT_STARTUP_TIMEOUT_S = 30.0

Scope = Literal["user", "project", "local"]
"""Where `moot mcp add` writes: the user's settings, `.mcp.json`, `.moot/settings.local.json`."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}


class LoadedServers(msgspec.Struct):
    """The servers the files define, and what the files say about approving them."""

    servers: dict[str, McpServerConfig]
    """By name; where two files define one name, the higher precedence file's."""
    problems: list[str] = msgspec.field(default_factory=list)
    """Files that could not be read: the rest still count."""
    enable_all_project: bool = False
    """The user's settings start every project server without asking."""
    enabled: frozenset[str] = frozenset()
    """Project servers the user's settings start without asking."""
    disabled: frozenset[str] = frozenset()
    """Servers a settings file turns off."""
    sampling_allowed: frozenset[str] = frozenset()
    """Servers the user's settings let use the session's model without asking
    (`mcpSamplingAllowed`), in every front end: a repository cannot grant it."""


def config_files(
    project: Path, environ: Mapping[str, str] | None = None
) -> list[tuple[Path, Origin]]:
    """The files that may define servers, lowest precedence first, with their origin."""
    from moot.paths import config_dir

    return [
        (config_dir(environ) / "settings.json", "user"),
        (project / ".mcp.json", "project"),
        (project / ".moot" / "settings.json", "project"),
        (project / ".moot" / "settings.local.json", "local"),
    ]


def scope_file(scope: Scope, project: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The file `moot mcp add --scope <scope>` writes."""
    from moot.paths import config_dir

    return {
        "user": config_dir(environ) / "settings.json",
        "project": project / ".mcp.json",
        "local": project / ".moot" / "settings.local.json",
    }[scope]


def load_servers(
    project: Path,
    environ: Mapping[str, str],
    *,
    extra: Sequence[McpServerConfig] = (),
    files: Sequence[tuple[Path, Origin]] | None = None,
) -> LoadedServers:
    """Every server the files (and a front end, `extra`) define for `project`.

    Args:
        project: The workspace root.
        environ: Where `${VAR}` is looked up (the session's environment).
        extra: Servers a front end brings (an editor over ACP); they win over the files'.
        files: The files to read, lowest precedence first; `config_files(project)` when None.

    Never raises for a bad file or server: a file that cannot be read is a `problems` entry,
    a server that cannot start as written carries its `problem`.
    """
    loaded = LoadedServers(servers={})
    enabled: set[str] = set()
    disabled: set[str] = set()
    for path, origin in config_files(project, environ) if files is None else files:
        try:
            data = read_object(path)
        except ConfigFileError as exc:
            loaded.problems.append(str(exc))
            continue
        if data is None:
            continue
        if origin == "user":
            loaded.enable_all_project = data.get(ENABLE_ALL_KEY) is True
            enabled.update(_names(data.get(ENABLED_KEY)))
            loaded.sampling_allowed = frozenset(_names(data.get(SAMPLING_KEY)))
        disabled.update(_names(data.get(DISABLED_KEY)))
        servers = data.get(SERVERS_KEY)
        if servers is None:
            continue
        if not isinstance(servers, dict):
            loaded.problems.append(f"{path}: {SERVERS_KEY} must be an object of servers by name")
            continue
        for name, raw in servers.items():
            loaded.servers[name] = parse_server(
                name, raw, origin=origin, source=str(path), environ=environ, project=project
            )
    for server in extra:
        loaded.servers[server.name] = server
    loaded.enabled, loaded.disabled = frozenset(enabled), frozenset(disabled)
    return loaded


def _names(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def fingerprint(name: str, raw: object) -> str:
    """A digest of a server's definition as written: an approval holds while it is unchanged."""
    text = json.dumps([name, raw], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def parse_server(
    name: str,
    raw: object,
    *,
    origin: Origin,
    source: str,
    environ: Mapping[str, str],
    project: Path | None = None,
) -> McpServerConfig:
    """One server's definition, checked and expanded; what is wrong goes into `problem`."""
    base: dict[str, Any] = {
        "name": name,
        "origin": origin,
        "source": source,
        "fingerprint": fingerprint(name, raw),
    }
    try:
        fields = _fields(name, raw, environ, project)
        if project is not None and fields.get("command"):
            named = workspace_files([fields["command"], *fields["args"]], project)
            if named:  # a script of the repository's: its content is part of what is approved
                base["fingerprint"] = fingerprint(name, [raw, named])
        return McpServerConfig(**base, **fields)
    except _Unusable as exc:
        transport = _transport(raw) if isinstance(raw, dict) else None
        return McpServerConfig(**base, transport=transport or "stdio", problem=str(exc))


class _Unusable(ValueError):
    """Why a definition cannot start."""


MAX_HASHED = 16 << 20


def workspace_files(words: Sequence[str], project: Path) -> dict[str, str]:
    """The files inside the workspace a command line names, with a digest of each: a server
    that runs the repository's own script is approved for that script as it is (the model, or
    a later commit, may change it)."""
    root = project.resolve()
    found: dict[str, str] = {}
    for word in words:
        if not word or word.startswith("-"):
            continue
        path = Path(word).expanduser()
        path = (root / path if not path.is_absolute() else path).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            continue
        try:
            with open(path, "rb") as file:
                digest = hashlib.sha256(file.read(MAX_HASHED)).hexdigest()
        except OSError:
            continue
        found[str(path.relative_to(root))] = digest
    return found


def _transport(raw: dict[str, Any]) -> Transport | None:
    kind = raw.get("type")
    if kind is None:
        return "stdio" if "command" in raw else "http" if "url" in raw else None
    return _TRANSPORTS.get(kind) if isinstance(kind, str) else None


def _startup_default(environ: Mapping[str, str]) -> float:
    """`MCP_TIMEOUT` (milliseconds, as Claude Code reads it), else 30 s."""
    try:
        given = float(environ.get("MCP_TIMEOUT", "") or 0) / 1000
    except ValueError:
        given = 0
    return given if given > 0 else DEFAULT_STARTUP_TIMEOUT_S


def _fields(
    name: str, raw: object, environ: Mapping[str, str], project: Path | None
) -> dict[str, Any]:
    if not valid_server_name(name):
        raise _Unusable(
            f"the name {name!r} may hold only letters, digits, '_' and '-' (and no '__')"
        )
    if not isinstance(raw, dict):
        raise _Unusable("a server is an object with a `command` or a `url`")
    transport = _transport(raw)
    if transport is None:
        raise _Unusable(f"unknown type {raw.get('type')!r}: stdio, http or sse")
    fields: dict[str, Any] = {
        "transport": transport,
        "timeout_s": _seconds(raw, "timeout", DEFAULT_TIMEOUT_S),
        "startup_timeout_s": _seconds(raw, "startupTimeout", _startup_default(environ)),
    }
    if transport == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command:
            raise _Unusable("a stdio server needs a `command`")
        fields["command"] = expand(command, environ)
        fields["args"] = tuple(expand(a, environ) for a in _strings(raw, "args"))
        fields["env"] = {k: expand(v, environ) for k, v in _mapping(raw, "env").items()}
        cwd = raw.get("cwd")
        if cwd is not None:
            if not isinstance(cwd, str):
                raise _Unusable("`cwd` must be a string")
            path = Path(expand(cwd, environ)).expanduser()
            fields["cwd"] = str(project / path if project and not path.is_absolute() else path)
    else:
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            raise _Unusable(f"an {transport} server needs a `url`")
        fields["url"] = expand(url, environ)
        if not fields["url"].startswith(("http://", "https://")):
            raise _Unusable(f"the url must start with http:// or https://, not {url!r}")
        fields["headers"] = {k: expand(v, environ) for k, v in _mapping(raw, "headers").items()}
    return fields


def _seconds(raw: dict[str, Any], key: str, default: float) -> float:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise _Unusable(f"`{key}` must be a positive number of seconds")
    return float(value)


def _strings(raw: dict[str, Any], key: str) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Unusable(f"`{key}` must be a list of strings")
    return value


def _mapping(raw: dict[str, Any], key: str) -> dict[str, str]:
    value = raw.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Unusable(f"`{key}` must be an object of strings")
    return value


def expand(text: str, environ: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` in `text`, from `environ`.

    Raises:
        ValueError: A variable without a default is not set (the message names it).
    """

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found:
            return found
        if default is not None:
            return default
        raise _Unusable(f"${{{name}}} is not set")

    return _VARIABLE.sub(value, text)
