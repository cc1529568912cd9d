"""Settings: defaults, then user settings, then the project's, then the command line.

Precedence, highest first: command-line flags, `.moot/settings.local.json` (personal,
git-ignored), `.moot/settings.json` (committed), `<config dir>/settings.json`, defaults. The
shape follows the one widely used coding agents share (`permissions.allow/ask/deny`,
`permissions.defaultMode`, `hooks`, `env`, `model`), so rules people already have carry over.
Permission rule lists add up across the files; every other value is overridden by a higher one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class SettingsError(ValueError):
    """A settings file that cannot be read or does not fit the schema; names the file."""


class Permissions(BaseModel):
    """Which tool calls run, ask or are refused."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    allow: list[str] = Field(default_factory=list)
    """Rules such as `Bash(npm run test:*)` or `Edit(src/**)` that run without asking."""
    ask: list[str] = Field(default_factory=list)
    """Rules that always ask, even when an allow rule or the mode would let the call run."""
    deny: list[str] = Field(default_factory=list)
    """Rules that are refused; a bare tool name removes the tool from the model's list."""
    default_mode: (
        Literal["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"] | None
    ) = Field(default=None, alias="defaultMode")
    """The permission mode a session starts in."""


class Settings(BaseModel):
    """Everything a settings file may hold."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    model: str | None = None
    """The model to use, `provider/model`."""
    permissions: Permissions = Field(default_factory=Permissions)
    sandbox: Literal["auto", "bubblewrap", "docker", "none"] | None = None
    """Where shell commands run; `none` runs them on the host, deliberately."""
    auto_commit: bool | None = Field(default=None, alias="autoCommit")
    """Commit the files a turn changed at its end (`moot undo` takes it back)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables for the session's commands."""
    hooks: dict[str, Any] = Field(default_factory=dict)
    """Commands run on session events (PreToolUse, PostToolUse, ...)."""


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
    try:
        Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise SettingsError(f"{path}: {problems}") from None
    return data


def merge(layers: list[dict[str, Any]]) -> Settings:
    """Later layers win; permission rule lists add up (without duplicates), and so do the
    hooks of each event: a project's `PreToolUse` hooks run besides the user's, not instead."""
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
            else:
                merged[key] = value
    merged["permissions"] = {**rules, "defaultMode": mode}
    return Settings.model_validate(merged)


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
