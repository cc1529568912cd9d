"""The session's approval policy, narrowed per agent and widened by active skills.

`ScopedPolicy` wraps the session's policy (`RulesPolicy`, or `NoAsking` in a headless run):

1. An agent definition's `tools` list limits that agent: a call of a tool it was not given is
   refused, and where the list names a tool only with specifiers (`Bash(pytest:*)`), a call
   no specifier covers is refused too (the test runner may run the tests and nothing else).
2. The wrapped policy decides.
3. Where it would ask (or, headless, refused only because nobody can ask), the rules a skill
   active for this agent pre-approves are added to the session's allow rules and the call is
   decided again by the same `decide`: deny rules, protected paths (a firm ask) and plan mode
   still win over a grant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec.structs import replace

from moot.protocol.approval import ApprovalPolicy, ApprovalRequest, SideEffect, Verdict
from moot.protocol.modes import PermissionMode
from moot.skills.grants import Grants

if TYPE_CHECKING:
    from moot.permissions.policy import RulesPolicy
    from moot.permissions.rules import Rule


class ToolLimit:
    """The tools an agent definition gives its agent, as rules (`Read`, `Bash(pytest:*)`).

    Args:
        agent: The agent's name.
        rules: Its `tools`, already checked.
    """

    def __init__(self, agent: str, rules: Sequence[str]) -> None:
        from moot.permissions.rules import Rule

        self.agent = agent
        self.texts = tuple(rules)
        # By name only: a `Bash(...)` specifier is compiled at the first call it decides, so a
        # session opens without loading the shell parser.
        self._names = tuple(Rule(text.partition("(")[0].strip()) for text in self.texts)
        self._rules: tuple[Rule, ...] | None = None

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules, compiled at first use."""
        if self._rules is None:
            from moot.permissions.rules import parse_rule

            self._rules = tuple(parse_rule(text) for text in self.texts)
        return self._rules

    def offers(self, tool: str) -> bool:
        """Whether the agent is given `tool` at all."""
        return any(rule.covers(tool) for rule in self._names)

    def refuses(self, request: ApprovalRequest, root: Path) -> str | None:
        """Why the agent may not make this call, or None when it may."""
        if not self.offers(request.tool):
            return f"{self.agent} was not given {request.tool} (its tools: {self._listed()})"
        try:
            rules = self.rules
        except ValueError as exc:
            return f"{self.agent}'s tools cannot be read: {exc}"
        covering = [rule for rule in rules if rule.covers(request.tool)]
        if any(rule.specifier is None for rule in covering):
            return None
        from moot.permissions.decide import decide  # the one decision function, as RulesPolicy
        from moot.permissions.rules import RuleSet

        # Asked as if the call changed something, so that only the rules can allow it (a read
        # would otherwise be allowed before the rules are looked at).
        probe = replace(request, side_effect=SideEffect.RUNS_COMMANDS, mode=None)
        verdict = decide(probe, PermissionMode.DEFAULT, RuleSet(allow=covering), root)
        if verdict.decision == "allow":
            return None
        allowed = ", ".join(str(rule) for rule in covering)
        return f"{self.agent} may use {request.tool} only as {allowed}"

    def _listed(self) -> str:
        return ", ".join(self.texts)


class ScopedPolicy:
    """See the module docstring.

    Args:
        inner: The session's policy.
        rules: The `RulesPolicy` under it: the session's rules, root and protected paths.
        grants: The session's active grants.
        limits: Tool limits by agent name.
    """

    def __init__(
        self,
        inner: ApprovalPolicy,
        rules: RulesPolicy,
        *,
        grants: Grants,
        limits: Mapping[str, ToolLimit] | None = None,
    ) -> None:
        self.inner = inner
        self.rules_policy = rules
        self.grants = grants
        self.limits = dict(limits or {})

    @property
    def default_mode(self) -> str:
        return self.rules_policy.default_mode

    def remember(self, session_id: str, rule: str, *, always: bool) -> None:
        self.rules_policy.remember(session_id, rule, always=always)

    def decide(self, request: ApprovalRequest) -> Verdict:
        root = self.rules_policy.workspace_root
        limit = self.limits.get(request.agent)
        if limit is not None and (why := limit.refuses(request, root)):
            return Verdict("deny", why)
        verdict = self.inner.decide(request)
        if verdict.decision == "allow" or verdict.firm:
            return verdict
        if verdict.decision == "deny" and not verdict.unasked:
            return verdict
        active = self.grants.of(request.agent)
        if not active:
            return verdict
        return self._granted(request, active) or verdict

    def _granted(
        self, request: ApprovalRequest, active: list[tuple[str, tuple[str, ...]]]
    ) -> Verdict | None:
        from moot.permissions.decide import decide

        policy = self.rules_policy
        rules = policy.rules(request.session_id)
        mode = PermissionMode(request.mode) if request.mode else policy.default_mode
        for by, granted in active:
            again = decide(
                request,
                mode,
                rules.extended(allow=granted),
                policy.workspace_root,
                protected=policy.protected,
            )
            if again.decision == "allow":
                return Verdict("allow", f"{again.reason}, pre-approved by {by} while it is active")
        return None
