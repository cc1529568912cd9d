"""The permission rules of one session: where each comes from, and the person's changes.

A rule comes from a settings file (the user's, `.moot/settings.json`,
`.moot/settings.local.json`), from the command line (`--allowedTools`, `--disallowedTools`) or
from an approval "for this session". The person adds and removes rules in
`.moot/settings.local.json` (the `permission_rule` person tool, `/permissions`); the session
then reads its settings again, so later tool calls are decided by the new rules at once and
the workspace's walks hide what a new `Read(...)` deny covers. Two things were fixed when the
session began and change only in the next one: the tools a bare deny removes from the model's
list, and what the sandbox masks (its masks were worked out from the rules at start).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from moot.client.errors import SetupError
from moot.client.rules import hide_read_denied, inode_check, session_rules
from moot.permissions.policy import RulesPolicy
from moot.permissions.rules import parse_rule
from moot.protocol.client import PermissionsReport, RuleEntry
from moot.settings import (
    RuleKind,
    SettingsError,
    load_settings,
    local_settings_file,
    remove_local_rule,
    rule_sources,
    save_local_rule,
)
from moot.settings.layers import ALL, SettingsLayers
from moot.workspace.paths import Workspace

COMMAND_LINE = "command line"
THIS_SESSION = "this session"


class SessionRules:
    """Reports and changes one session's permission rules.

    Args:
        policy: The session's policy (its rules are replaced after a change).
        workspace: The session's workspace (its hidden paths follow `Read(...)` denies).
        session_id: The session (its approvals "for this session").
        allow: Allow rules the front end added (`--allowedTools`).
        deny: Deny rules the front end added (`--disallowedTools`).
        layers: The settings layers the session reads (`--setting-sources`, `--settings`).
    """

    def __init__(
        self,
        policy: RulesPolicy,
        workspace: Workspace,
        session_id: str,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        layers: SettingsLayers = ALL,
    ) -> None:
        self.policy = policy
        self.workspace = workspace
        self.session_id = session_id
        self.allow, self.deny = tuple(allow), tuple(deny)
        self.layers = layers

    @property
    def root(self) -> Path:
        return self.workspace.root

    def report(self, mode: str | None) -> PermissionsReport:
        """Every rule in force with its source (a settings file that cannot be read is
        named in place of its rules)."""
        entries: list[RuleEntry] = []
        try:
            entries += [
                RuleEntry(k, r, str(p)) for k, r, p in rule_sources(self.root, chosen=self.layers)
            ]
        except SettingsError as exc:
            entries.append(RuleEntry("deny", "(unreadable)", str(exc)))
        entries += [RuleEntry("allow", r, COMMAND_LINE) for r in self.allow]
        entries += [RuleEntry("deny", r, COMMAND_LINE) for r in self.deny]
        approved = self.policy.approved(self.session_id)
        entries += [RuleEntry("allow", str(r), THIS_SESSION) for r in approved]
        return PermissionsReport(
            mode=mode, rules=tuple(entries), local_file=str(local_settings_file(self.root))
        )

    def change(self, action: Literal["add", "remove"], kind: RuleKind, text: str) -> str:
        """Add a rule to `.moot/settings.local.json`, or take one out (or forget an approval
        for this session); the session's rules follow at once. Returns what was done.

        Raises:
            ValueError: A malformed rule, or one that is not where it could be removed (the
                message says where it comes from).
        """
        rule = str(parse_rule(text))  # refuses a malformed rule before anything is written
        local = local_settings_file(self.root)
        if action == "add":
            save_local_rule(self.root, kind, rule)
            done = f"added {kind} rule {rule} to {local}"
        elif remove_local_rule(self.root, kind, rule):
            done = f"removed {kind} rule {rule} from {local}"
        elif kind == "allow" and self.policy.drop_allow(self.session_id, parse_rule(rule)):
            return f"forgot {rule}, approved for this session"
        else:
            raise ValueError(self._not_removable(kind, rule))
        self.reload()
        return done + "; it holds from now on" + self._later(kind, rule)

    def reload(self) -> None:
        """Read the settings' rules again and decide by them from now on.

        Raises:
            ValueError: The settings cannot be read, or hold a malformed rule.
        """
        # The one way a session's rules are made, and what they hide (`client/rules.py`).
        try:
            rules = session_rules(
                load_settings(self.root, chosen=self.layers), self.allow, self.deny
            )
        except (SettingsError, SetupError) as exc:
            raise ValueError(f"the settings no longer load: {exc}") from None
        self.policy.replace_rules(rules)
        hide_read_denied(self.workspace, rules)
        added = self.workspace.added_roots
        self.workspace.hidden_inodes = inode_check(rules, self.root, added=added)

    def _not_removable(self, kind: RuleKind, rule: str) -> str:
        sources = [e.source for e in self.report(None).rules if e.kind == kind and e.rule == rule]
        if not sources:
            return f"no {kind} rule {rule}; /permissions lists the rules in force"
        return f"{kind} rule {rule} comes from {', '.join(sources)}; remove it there"

    @staticmethod
    def _later(kind: RuleKind, rule: str) -> str:
        parsed = parse_rule(rule)
        if kind != "deny":
            return ""
        if parsed.specifier is None:
            return " (the model's list of tools changes in the next session: /new)"
        if parsed.path is not None:
            return " (inside the sandbox its paths are masked from the next session: /new)"
        return ""
