"""Permission updates between moot's rules and Claude Code's `PermissionUpdate`s: the
suggestions a `can_use_tool` request carries, and what an `allow` that keeps a rule asks."""

from __future__ import annotations

import re
from typing import Any, Literal

_RULE = re.compile(r"(?P<tool>[^()]+)(?:\((?P<content>.*)\))?$", re.S)

Scope = Literal["once", "session", "always"]


def suggestions(rules: tuple[str, ...]) -> list[dict[str, Any]]:
    """moot's suggested allow rules (`bash(git status:*)`) as `addRules` updates."""
    updates = []
    for rule in rules:
        match = _RULE.match(rule.strip())
        if match is None:
            continue
        entry: dict[str, Any] = {"toolName": match["tool"]}
        if match["content"] is not None:
            entry["ruleContent"] = match["content"]
        updates.append(
            {"type": "addRules", "rules": [entry], "behavior": "allow", "destination": "session"}
        )
    return updates


def kept_rule(updates: list[dict[str, Any]]) -> tuple[Scope, str | None, list[str]]:
    """What an allow's `updatedPermissions` keep: the scope and the one allow rule moot keeps
    (`Approve.scope`, `Approve.rule`), and the updates it cannot apply, described."""
    scope: Scope = "once"
    rule: str | None = None
    left: list[str] = []
    for update in updates:
        rules = update.get("rules") or []
        allow = update.get("type") == "addRules" and update.get("behavior") == "allow"
        if not allow or len(rules) != 1 or rule is not None:
            left.append(f"{update.get('type')} {update.get('behavior') or ''}".strip())
            continue
        entry = rules[0]
        content = entry.get("ruleContent")
        rule = f"{entry['toolName']}({content})" if content else str(entry["toolName"])
        scope = "session" if update.get("destination") in ("session", "cliArg") else "always"
    return scope, rule, left
