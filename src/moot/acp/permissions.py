"""moot's approvals as ACP permission requests, and the editor's choice back as an op.

A tool call offers: allow once (`Approve`, scope once), allow for this session (scope session,
keeping the rule moot suggested), always allow (scope always: the rule is also saved to
`.moot/settings.local.json`), reject (`Deny`). A plan (`exit_plan_mode`) offers to start work
accepting edits or asking before each, or to keep planning.
"""

from __future__ import annotations

from typing import Any

from moot.protocol import events as ev
from moot.protocol import ops

PLAN_TOOL = "exit_plan_mode"
_PLAN_OPTIONS = (
    ("plan:acceptEdits", "Yes, and accept edits", "allow_always"),
    ("plan:default", "Yes, and ask before each edit", "allow_once"),
    ("reject", "No, keep planning", "reject_once"),
)


def options(event: ev.ApprovalRequested) -> list[dict[str, Any]]:
    """The choices the editor shows for an approval (keeping a rule only when moot has one to
    keep: the request's suggested rules)."""
    if event.tool == PLAN_TOOL:
        chosen = list(_PLAN_OPTIONS)
    else:
        chosen = [("once", "Allow once", "allow_once")]
        if event.suggested_rules:
            rules = ", ".join(event.suggested_rules)
            chosen += [
                ("session", f"Allow for this session ({rules})", "allow_always"),
                ("always", f"Always allow ({rules})", "allow_always"),
            ]
        chosen.append(("reject", "Reject", "reject_once"))
    return [{"optionId": i, "name": n, "kind": k} for i, n, k in chosen]


def answer(event: ev.ApprovalRequested, option_id: str | None) -> ops.Approve | ops.Deny:
    """The op for the editor's choice; None (the request was cancelled) refuses."""
    keys: dict[str, Any] = {"tool_call_id": event.tool_call_id, "call_id": event.call_id}
    if option_id is None:
        return ops.Deny(**keys, feedback="The person cancelled the request in the editor.")
    if option_id in ("once", "session", "always"):
        return ops.Approve(**keys, scope=option_id)  # type: ignore[arg-type]
    if option_id in ("plan:acceptEdits", "plan:default"):
        return ops.Approve(**keys, mode=option_id.removeprefix("plan:"))  # type: ignore[arg-type]
    return ops.Deny(**keys, feedback="The person rejected this in the editor.")
