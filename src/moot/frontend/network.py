"""A network question (`network_access_requested`) as the approvals front ends already ask:
an `approval_requested` of the tool `network`, answered with `AnswerNetworkAccess`.

A sandboxed command connects to a host on neither `sandbox.network` list; the session waits
for the person. Front ends queue approvals keyed by (agent call, tool call), show a preview and
offer once, for the session, always, no: the question fits as it is, keyed by ("", its
request id), the host as the preview and the rule it would keep.
"""

from __future__ import annotations

from typing import Literal

from moot.protocol import events as ev
from moot.protocol import ops

NETWORK = "network"
"""The tool name a network question is shown under."""


def as_approval(request: ev.NetworkAccessRequested) -> ev.ApprovalRequested:
    """The question as an approval request, for the approvals queue and its printing."""
    where = f"{request.host}:{request.port}"
    return ev.ApprovalRequested(
        session_id=request.session_id,
        seq=request.seq,
        agent="a sandboxed command",
        tool_call_id=request.request_id,
        tool=NETWORK,
        arguments={"host": request.host, "port": request.port},
        preview=where,
        reason=f"it connects to {where}, on neither sandbox.network list",
        suggested_rules=(request.host,),
    )


def network_answer(request: ev.ApprovalRequested, key: str) -> ops.Op | None:
    """The op a key answers a network question with: `y` once, `s` for the session, `a`
    always (into `.moot/settings.local.json`), `n` no; None for another key."""
    scopes: dict[str, Literal["once", "session", "always"]] = {
        "y": "once",
        "s": "session",
        "a": "always",
    }
    if key == "n":
        return ops.AnswerNetworkAccess(request_id=request.tool_call_id, approved=False)
    if key in scopes:
        return ops.AnswerNetworkAccess(
            request_id=request.tool_call_id, approved=True, scope=scopes[key]
        )
    return None
