"""Permissions for runs nobody watches (`moot -p`): whatever would ask is refused, and says how
to allow it."""

from __future__ import annotations

from pathlib import Path

from moot.core.approval import ApprovalRequest, Verdict
from moot.permissions.decide import suggested_rules
from moot.permissions.policy import RulesPolicy


class NoAsking:
    """Wraps a policy so that an `ask` becomes a `deny` the model (and the output) can read."""

    def __init__(self, policy: RulesPolicy, workspace_root: Path) -> None:
        self.policy = policy
        self.workspace_root = workspace_root

    def decide(self, request: ApprovalRequest) -> Verdict:
        verdict = self.policy.decide(request)
        if verdict.decision != "ask":
            return verdict
        rules = suggested_rules(request, self.workspace_root, self.policy.rules(request.session_id))
        how = f'--allowedTools "{rules[0]}"' if rules else "--allowedTools"
        return Verdict(
            "deny",
            f"{verdict.reason}; a headless run cannot ask: allow it with {how} "
            "or --permission-mode acceptEdits / bypassPermissions",
        )
