"""The `hooks` key of settings: parsed and checked once, before a session starts.

The shape is the one widely used coding agents share::

    {"hooks": {"PreToolUse": [{"matcher": "bash|edit",
                               "hooks": [{"type": "command", "command": "./check.sh",
                                          "timeout": 30}]}]}}

Each event maps to a list of matcher groups; each group runs its command hooks when its
`matcher`, a regular expression, matches the whole of the event's subject (the tool name for
PreToolUse and PostToolUse, the source for SessionStart, ...). An empty matcher or `*` matches
everything. Tool names are matched ignoring case, so `Bash|Edit|Write` written for another
agent matches moot's `bash`, `edit` and `write`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

import msgspec

from moot.hooks.scripts import protected_scripts
from moot.protocol.events import HookEventName
from moot.settings import SettingsError, settings_files

EVENTS: tuple[HookEventName, ...] = get_args(HookEventName)
DEFAULT_TIMEOUT = 60.0
"""Seconds a hook command may run when its `timeout` is not set."""


class HookConfigError(SettingsError):
    """A `hooks` setting that does not fit the schema; names the file and the key."""


class CommandHook(msgspec.Struct, frozen=True):
    """One command to run: `/bin/sh -c command` in the workspace."""

    command: str
    timeout: float = DEFAULT_TIMEOUT
    """Seconds before the command's process group is killed."""


class MatcherGroup(msgspec.Struct, frozen=True):
    """Command hooks that run when `matcher` matches the event's subject."""

    matcher: re.Pattern[str] | None
    """None: matches every subject (an empty matcher or `*`)."""
    hooks: tuple[CommandHook, ...]

    def matches(self, subject: str | None) -> bool:
        return self.matcher is None or (
            subject is not None and self.matcher.fullmatch(subject) is not None
        )


class HookConfig(msgspec.Struct, frozen=True):
    """The hooks of a session, by event name."""

    events: Mapping[str, tuple[MatcherGroup, ...]]

    def commands(self, event: HookEventName, subject: str | None = None) -> list[CommandHook]:
        """The commands to run for `event`, in settings order, identical commands once."""
        seen: dict[str, CommandHook] = {}
        for group in self.events.get(event, ()):
            if group.matches(subject):
                for hook in group.hooks:
                    seen.setdefault(hook.command, hook)
        return list(seen.values())

    def __bool__(self) -> bool:
        return any(self.events.values())

    def all_commands(self) -> list[str]:
        """Every command of every event, once each."""
        return list(
            dict.fromkeys(
                hook.command
                for groups in self.events.values()
                for group in groups
                for hook in group.hooks
            )
        )

    def scripts(self, root: Path) -> tuple[str, ...]:
        """The workspace files hook commands name, to protect like `.moot/` (hooks run on the
        host; see `moot.hooks.scripts`), workspace-relative."""
        return protected_scripts(self.all_commands(), os.path.realpath(root))


def parse_hooks(data: Mapping[str, Any], source: str = "settings") -> HookConfig:
    """Check and compile a `hooks` setting.

    Args:
        data: The value of the `hooks` key.
        source: What to name in errors (a settings file's path).

    Raises:
        HookConfigError: An unknown event, a bad regular expression, a hook that is not a
            command with a positive timeout; the message names `source` and the key.
    """

    def fail(key: str, problem: str) -> HookConfigError:
        return HookConfigError(f"{source}: hooks.{key}: {problem}")

    if not isinstance(data, Mapping):
        raise HookConfigError(f"{source}: hooks must be an object of events")
    events: dict[str, tuple[MatcherGroup, ...]] = {}
    for event, groups in data.items():
        if event not in EVENTS:
            raise fail(event, f"unknown hook event; the events are {', '.join(EVENTS)}")
        if not isinstance(groups, list):
            raise fail(event, "must be a list of {matcher, hooks} objects")
        events[event] = tuple(_group(g, f"{event}[{i}]", fail) for i, g in enumerate(groups))
    return HookConfig(events)


def _group(raw: object, key: str, fail: Any) -> MatcherGroup:
    if not isinstance(raw, Mapping):
        raise fail(key, "must be an object with `matcher` and `hooks`")
    if unknown := sorted(set(raw) - {"matcher", "hooks"}):
        raise fail(key, f"unknown keys {unknown}")
    matcher = raw.get("matcher", "")
    if not isinstance(matcher, str):
        raise fail(f"{key}.matcher", "must be a string (a regular expression)")
    try:
        pattern = None if matcher in ("", "*") else re.compile(matcher, re.IGNORECASE)
    except re.error as exc:
        raise fail(f"{key}.matcher", f"bad regular expression {matcher!r}: {exc}") from None
    hooks = raw.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        raise fail(f"{key}.hooks", "must be a non-empty list of command hooks")
    return MatcherGroup(
        pattern, tuple(_command(h, f"{key}.hooks[{i}]", fail) for i, h in enumerate(hooks))
    )


def _command(raw: object, key: str, fail: Any) -> CommandHook:
    if not isinstance(raw, Mapping):
        raise fail(key, 'must be an object such as {"type": "command", "command": "..."}')
    if unknown := sorted(set(raw) - {"type", "command", "timeout"}):
        raise fail(key, f"unknown keys {unknown}")
    if raw.get("type", "command") != "command":
        raise fail(f"{key}.type", f"only `command` hooks are supported, not {raw.get('type')!r}")
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise fail(f"{key}.command", "must be a non-empty string")
    timeout = raw.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise fail(f"{key}.timeout", f"must be a positive number of seconds, not {timeout!r}")
    return CommandHook(command, float(timeout))


def hooks_from_settings(
    hooks: Mapping[str, Any], project: Path, environ: Mapping[str, str] | None = None
) -> HookConfig:
    """The hooks of merged settings; an error names the settings file it comes from.

    Args:
        hooks: `Settings.hooks` (already merged across the settings files).
        project: The project directory the settings were loaded for.
        environ: The environment the settings were loaded with (for the user config dir).

    Raises:
        HookConfigError: A file's `hooks` do not fit; the message names that file.
    """
    with contextlib.suppress(HookConfigError):
        return parse_hooks(hooks)
    # Find the file to blame: the merged value lost where each event came from.
    for path in reversed(settings_files(project, environ)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "hooks" in data:
            parse_hooks(data["hooks"], str(path))
    return parse_hooks(hooks)
