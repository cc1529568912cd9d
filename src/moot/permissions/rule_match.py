"""Which rules apply to a tool call, as `decide` asks: the first deny or ask rule that restricts
any of it, what together allows all of it, and what of it no allow rule covers.

A call is matched as `moot.permissions.targets` describes it: every form of each path it
touches, every sub-command of a shell command and each file its command line writes, the host
of a fetch (see `decide`'s docstring for how rules meet each).
"""

from __future__ import annotations

from collections.abc import Iterable

from moot.permissions.rules import Rule, RuleSet
from moot.permissions.shell import matches_prefix
from moot.permissions.targets import Call, Command, Target, in_a_root, inside
from moot.protocol.modes import PermissionMode

SHELL_FILE_RULES = frozenset({"Read", "Edit", "Write"})
"""File rules that also reach the files a shell command line names."""


def first_restricting(rules: Iterable[Rule], call: Call) -> str | None:
    """The first deny or ask rule that applies, with what it matched: `Read(./.env) (.env)`."""
    for rule in rules:
        if rule.restricts(call.tool) and rule.specifier is None:
            return str(rule)
        if (matched := _restricted_part(rule, call)) is not None:
            return f"{rule} ({matched})"
    return None


def _restricted_part(rule: Rule, call: Call) -> str | None:
    """What of the call a deny or ask rule with a specifier matches, or None."""
    if rule.path is not None and rule.restricts(call.tool):
        return _matching_form(rule, call.targets or (), call.root)
    if rule.path is not None and rule.tool in SHELL_FILE_RULES:
        for command in call.commands or ():
            named = command.reads if rule.tool == "Read" else command.writes
            if (form := _matching_form(rule, named, call.root)) is not None:
                return f"{form} in: {command.shown}"
        return None
    if rule.tool == "Bash" and rule.specifier is not None:
        for command in call.commands or ():
            if matches_prefix(command.sub, str(rule), by_name=True):
                return command.sub.text
        return None
    if rule.domain is not None and call.host and rule.domain.matches(call.host):
        return call.host
    return None


def _matching_form(rule: Rule, targets: Iterable[Target], root: str) -> str | None:
    assert rule.path is not None
    for target in targets:
        for form in target.forms:
            if rule.path.matches(form, root, is_dir=target.is_dir):
                return shown(form, root)
    return None


def allowing(rules: tuple[Rule, ...], call: Call, mode: PermissionMode) -> list[str] | None:
    """What together allows all of the call (rules, and the mode for a shell command's
    writes), or None when something is left over."""
    covering = [rule for rule in rules if rule.covers(call.tool)]
    if bare := [rule for rule in covering if rule.specifier is None]:
        return [str(bare[0])]
    used: list[str] = []
    for part in parts_to_allow(call):
        command = part if isinstance(part, Command) else None
        if command is None or command.sub.words or not command.checkable:
            rule = next((r for r in covering if _allows_part(r, part, call)), None)
            if rule is None:
                return None
            used.append(str(rule))
        for target in command.writes if command else ():
            allowed = _edit_allowed(target, call, rules, mode)
            if allowed is None:
                return None
            used.append(allowed)
    return list(dict.fromkeys(used)) or None  # nothing to match is never allowed by a pattern


def parts_to_allow(call: Call) -> list[object]:
    """What each must be allowed: every form of every path, every sub-command, the host."""
    if call.targets is not None:
        return [(form, target.is_dir) for target in call.targets for form in target.forms]
    if call.commands is not None:
        # A statement of assignments alone runs and writes nothing a rule could name.
        return [c for c in call.commands if c.sub.words or c.writes or not c.checkable]
    return [call.host] if call.host else []


def _allows_part(rule: Rule, part: object, call: Call) -> bool:
    if rule.path is not None and isinstance(part, tuple):
        form, is_dir = part
        return rule.path.matches(form, call.root, is_dir=is_dir)
    if rule.tool == "Bash" and isinstance(part, Command):
        return part.checkable and bool(part.sub.words) and matches_prefix(part.sub, str(rule))
    if rule.domain is not None and isinstance(part, str):
        return rule.domain.matches(part)
    return False


def _edit_allowed(
    target: Target, call: Call, allow: Iterable[Rule], mode: PermissionMode
) -> str | None:
    """What lets a shell command line write `target`, as an edit of it would be allowed: an
    `Edit(...)` or `Write(...)` allow rule, or acceptEdits mode; never outside the workspace
    and the added directories, where the edit tools write nothing. None when nothing does."""
    if not all(in_a_root(form, call) for form in target.forms):
        return None
    for rule in allow:
        if rule.tool not in ("Edit", "Write"):
            continue
        if rule.path is None or all(
            rule.path.matches(form, call.root, is_dir=target.is_dir) for form in target.forms
        ):
            return str(rule)
    if mode == PermissionMode.ACCEPT_EDITS:
        return "permission mode acceptEdits (an edit in the workspace)"
    return None


def commands_left(call: Call, rules: RuleSet) -> list[Command]:
    """The sub-commands whose program no allow rule covers."""
    covering = [rule for rule in rules.allow if rule.covers(call.tool)]
    return [
        part
        for part in parts_to_allow(call)
        if isinstance(part, Command) and not any(_allows_part(r, part, call) for r in covering)
    ]


def writes_left(
    call: Call, allow: Iterable[Rule], mode: PermissionMode
) -> list[tuple[Command, Target]]:
    """The files a shell command line writes that no allow rule or the mode lets it write,
    each with its sub-command."""
    return [
        (command, target)
        for command in call.commands or ()
        for target in command.writes
        if _edit_allowed(target, call, allow, mode) is None
    ]


def speaks_about_commands(rule: Rule) -> bool:
    """A rule with a specifier that shell commands are checked against."""
    return rule.specifier is not None and (rule.tool == "Bash" or rule.tool in SHELL_FILE_RULES)


def shown(path: str, root: str) -> str:
    """`path` as a reason names it: from the workspace root inside it, as it is outside."""
    parts = inside(path, root)
    return "/".join(parts) if parts else path
