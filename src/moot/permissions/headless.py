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
        return Verdict(
            "deny",
            f"{verdict.reason}; a headless run cannot ask: {how_to_allow(verdict)}",
            unasked=not verdict.firm,  # what only a person may answer, no hook answers either
        )


def how_to_allow(verdict: Verdict) -> str:
    """What lets a call that asked run in a headless run: only what `verdict` says would
    (`Verdict.runs_with_rules`, `runs_in_modes`), so the advice holds in every mode."""
    if verdict.firm:
        return (
            "a protected path is written only with the person's approval, whatever the rules "
            "and the mode: the person can approve it in an interactive session (`moot` without "
            "-p) or make the change themselves"
        )
    ways = [f'--allowedTools "{",".join(verdict.runs_with_rules)}"'] * bool(verdict.runs_with_rules)
    ways += [f"--permission-mode {mode}" for mode in verdict.runs_in_modes]
    if not ways:
        return (
            "no allow rule or mode lets it run without the person's approval, which an "
            "interactive session (`moot` without -p) can ask for"
        )
    return f"allow it with {' or '.join(ways)}"
