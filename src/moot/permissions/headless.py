"""Permissions for runs nobody watches (`moot -p`): whatever would ask is refused, and says how
to allow it."""

from __future__ import annotations

from pathlib import Path

from moot.permissions.policy import RulesPolicy
from moot.protocol.approval import EXIT_PLAN_MODE, ApprovalRequest, Verdict


class NoAsking:
    """Wraps a policy so that an `ask` becomes a `deny` the model (and the output) can read."""

    def __init__(self, policy: RulesPolicy, workspace_root: Path) -> None:
        self.policy = policy
        self.workspace_root = workspace_root

    @property
    def default_mode(self) -> str:
        return self.policy.default_mode

    def remember(self, session_id: str, rule: str, *, always: bool) -> None:
        self.policy.remember(session_id, rule, always=always)

    def decide(self, request: ApprovalRequest) -> Verdict:
        verdict = self.policy.decide(request)
        if verdict.decision != "ask":
            return verdict
        if request.tool == EXIT_PLAN_MODE:
            return Verdict(
                "deny",
                "nobody can approve a plan in a headless run: end your turn with the plan as "
                "your answer",
            )  # not `unasked`: a hook cannot stand in for the person approving a plan
        from moot.permissions.decide import suggested_rules  # lazy, as in RulesPolicy.decide

        rules = suggested_rules(request, self.workspace_root, self.policy.rules(request.session_id))
        how = f'--allowedTools "{rules[0]}"' if rules else "--allowedTools"
        return Verdict(
            "deny",
            f"{verdict.reason}; a headless run cannot ask: allow it with {how} "
            "or --permission-mode acceptEdits / bypassPermissions",
            unasked=not verdict.firm,  # what only a person may answer, no hook answers either
        )
