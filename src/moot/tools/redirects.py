"""`PolicyRedirects`: a redirect `web_fetch` meets, settled by the session's approval policy.

The first URL of a fetch passes the approval step like any tool call; a redirect to another
host is a fetch of a URL nobody settled. The tool asks through this seam
(`moot.tools.base.RedirectCheck`), which asks the same policy the approval step asks, as
if the model had called `web_fetch` with the redirect's URL: `WebFetch(domain:...)` deny and
allow rules, the mode, and where nobody can answer (`NoAsking`), the refusal that says how to
allow it. The policy is only consulted, never answered by a person: a hop that would ask is
not followed, and the model may fetch its URL with a call of its own, which then asks.

It lives with the tools, not in `moot.permissions`: it needs only the policy seam
(`moot.protocol.approval`), and the permission layer imports no tool (the tools read the
permission layer's shell parser, `moot.permissions.targets`).
"""

from __future__ import annotations

from moot.protocol.approval import ApprovalPolicy, ApprovalRequest
from moot.tools.base import HopVerdict, SideEffect, ToolContext


class PolicyRedirects:
    """A `RedirectCheck` that puts each hop to an `ApprovalPolicy` as a `web_fetch` call."""

    def __init__(self, policy: ApprovalPolicy) -> None:
        """Args:
        policy: The session's approval policy (the one its approval step asks).
        """
        self.policy = policy

    def check(self, url: str, ctx: ToolContext) -> HopVerdict:
        """Settle a `web_fetch` of `url` in the call `ctx` belongs to."""
        request = ApprovalRequest(
            session_id=ctx.session_id,
            agent=ctx.agent,
            call_id=ctx.call_id,
            tool_call_id=ctx.tool_call_id,
            tool="web_fetch",
            side_effect=SideEffect.NETWORK,
            arguments={"url": url},
        )
        verdict = self.policy.decide(request)
        return HopVerdict(verdict.decision, verdict.reason)
