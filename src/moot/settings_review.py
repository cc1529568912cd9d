"""What a repository's own settings turn on, told to the person once.

A repository's committed `.moot/settings.json` can run commands on the host (`sandbox:
"none"`, hooks), let every command, edit or fetch run without asking (broad allow rules,
`bypassPermissions`), or send your API key to another server (a `*_BASE_URL` in `env`). The
person did not choose these: they cloned them. So the first time moot loads such a file in a
workspace, and again whenever its content changes, the front end gets a `RepositoryNotice`
naming the file and each such grant; `moot -p` prints it on stderr. `.moot/settings.local.json`
is the person's own, git-ignored file and user settings are theirs too: no notice for either.

What was shown is remembered in `<data dir>/settings-notices.json` (workspace -> sha256 of the
file's bytes), outside the workspace and out of the sandbox's reach. When it cannot be written
(a read-only home) the notice is shown every time rather than never.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from moot.settings import LoadedSettings

NOTICES_FILE = "settings-notices.json"
_KEPT = 500
"""Workspaces remembered; the oldest are forgotten first (and would be told again)."""
_RULE = re.compile(r"\s*([A-Za-z0-9_-]+)\s*(?:\((.*)\))?\s*", re.DOTALL)
_SHELL = {"Bash", "bash"}
_EDITS = {"Edit", "Write", "edit", "multi_edit", "write"}
_FETCH = {"WebFetch", "web_fetch"}
_ALL_FILES = {"", "*", "**", "**/*", "**/**"}


class RepositoryNotice(msgspec.Struct, frozen=True):
    """A repository's own settings file and what it turns on that the person should know."""

    file: str
    """The repository's `.moot/settings.json`."""
    grants: tuple[str, ...]
    """Each thing it turns on, as a short phrase."""

    def __str__(self) -> str:
        return (
            f"{self.file} comes with this repository and turns on: {'; '.join(self.grants)}. "
            "Review it; moot says this once, and again when the file changes"
        )


def grants(data: Mapping[str, Any]) -> list[str]:
    """What a settings file's content turns on that runs or reaches out without asking."""
    found = []
    if data.get("sandbox") == "none":
        found.append('"sandbox": "none" (shell commands run on the host, unsandboxed)')
    permissions = data.get("permissions")
    permissions = permissions if isinstance(permissions, dict) else {}
    if permissions.get("defaultMode") == "bypassPermissions":
        found.append('"defaultMode": "bypassPermissions" (nothing asks)')
    allow = permissions.get("allow")
    broad = [r for r in allow if isinstance(r, str) and broad_rule(r)] if allow else []
    if broad:
        found.append(f"allow {', '.join(broad)} (runs without asking)")
    if hooks := data.get("hooks"):
        commands = _hook_commands(hooks)
        found.append(f"hooks run on the host: {', '.join(commands) if commands else 'some'}")
    env = data.get("env")
    for name, value in env.items() if isinstance(env, dict) else ():
        if name.endswith("_BASE_URL") or name == "OLLAMA_HOST":
            found.append(f"env {name}={value} (your API key goes to that server)")
    return found


def broad_rule(rule: str) -> bool:
    """Whether an allow rule lets a whole kind of tool run: the shell, edits over every file
    (or outside the workspace), or any web fetch."""
    parsed = _RULE.fullmatch(rule)
    if parsed is None:
        return False
    name, specifier = parsed[1], parsed[2]
    spec = None if specifier is None or specifier.strip() == "*" else specifier.strip()
    if name in _SHELL or name in _FETCH:
        return spec is None or spec == ":*"
    if name in _EDITS:
        if spec is None or spec.startswith(("//", "~", "..")):
            return True
        return spec.removeprefix("./").removeprefix("/") in _ALL_FILES
    return False


def _hook_commands(hooks: object) -> list[str]:
    commands: list[str] = []
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                command = entry.get("command") if isinstance(entry, dict) else None
                if isinstance(command, str) and command not in commands:
                    commands.append(command)
    return commands


def repository_notice(
    settings: LoadedSettings, project: Path, environ: Mapping[str, str] | None = None
) -> RepositoryNotice | None:
    """The notice about the repository's own settings, unless this workspace was told about
    this very content before; asking for it records it as told.

    Args:
        settings: What `load_settings(project, environ)` returned.
        project: The workspace the settings were loaded for.
        environ: The environment (`MOOT_HOME`); `os.environ` when None.
    """
    if settings.repository_file is None or settings.repository_digest is None:
        return None
    found = grants(settings.repository_data)
    if not found:
        return None
    from moot.paths import data_dir  # here: only a repository with such settings needs it

    memory = data_dir(environ) / NOTICES_FILE
    seen = _load(memory)
    workspace = str(project.resolve())
    if seen.get(workspace) == settings.repository_digest:
        return None
    seen.pop(workspace, None)
    seen[workspace] = settings.repository_digest
    _save(memory, dict(list(seen.items())[-_KEPT:]))
    return RepositoryNotice(settings.repository_file, tuple(found))


def _load(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _save(path: Path, seen: dict[str, str]) -> None:
    """Write atomically; a home that cannot be written just means the notice comes again."""
    import tempfile  # only when there is a notice to remember

    from moot.paths import make_private_dir

    with contextlib.suppress(OSError):
        make_private_dir(path.parent)  # the data directory: this user's only
        fd, temp = tempfile.mkstemp(prefix=".settings-notices-", dir=path.parent)  # 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(seen, file, indent=1)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
