"""The runtime's side of the approval seam (`moot.protocol.approval`): waiting for answers.

A policy settles what needs no person (allow, deny); what it cannot settle becomes an
`approval_requested` event out and waits for an `Approve` or `Deny` op back. Permission rules
and modes plug in here as a policy (`moot.permissions.policy.RulesPolicy`); without one,
`AllowAll` settles everything (the Python API's default).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

import msgspec

from moot.protocol import ops
from moot.protocol.approval import ApprovalRequest, Verdict
from moot.protocol.modes import ModeName


class AllowAll:
    """Allows every tool call: the default until permission rules exist."""

    def decide(self, request: ApprovalRequest) -> Verdict:
        return Verdict("allow", "no permission rules configured")


class Answer(msgspec.Struct, frozen=True):
    approved: bool
    submission_id: str = ""
    """The `Approve` or `Deny` op that answered; the `approval_decided` event carries it."""
    feedback: str = ""
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    """For session/always: the allow rule to keep (the request's first suggestion if None)."""
    mode: ModeName | None = None
    """Also switch the session to this permission mode (an approved plan leaves plan mode)."""
    updated_input: dict[str, Any] | None = None
    """Run the call with these arguments instead (decided again by the policy first)."""

    @classmethod
    def approving(cls, op: ops.Approve, submission_id: str) -> Answer:
        """The answer an `Approve` op gives."""
        return cls(
            approved=True,
            scope=op.scope,
            rule=op.rule,
            mode=op.mode,
            submission_id=submission_id,
            updated_input=op.updated_input,
        )


ApprovalKey = tuple[str, str]
"""(agent call id, tool call id): tool call ids are unique only within one agent call, so two
peers (or a model that reuses ids) may wait on the same tool call id at once."""


class PendingApprovals(msgspec.Struct):
    """Futures for tool calls that wait on the person, keyed by (agent call, tool call)."""

    _waiting: dict[ApprovalKey, asyncio.Future[Answer]] = {}

    def expect(self, call_id: str, tool_call_id: str) -> asyncio.Future[Answer]:
        """Register a waiter before the request goes out, so no answer can arrive unheard."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._waiting[(call_id, tool_call_id)] = future
        return future

    def discard(self, call_id: str, tool_call_id: str) -> None:
        self._waiting.pop((call_id, tool_call_id), None)

    def answer(self, call_id: str, tool_call_id: str, answer: Answer) -> str:
        """Resolve the waiting call; returns "" when it did, else why nothing was answered.

        An empty `call_id` names the one waiting call with that tool call id, if only one does.
        """
        if call_id:
            keys = [(call_id, tool_call_id)]
        else:
            keys = [key for key in self._waiting if key[1] == tool_call_id]
            if len(keys) > 1:
                calls = ", ".join(key[0] for key in keys)
                return (
                    f"tool call {tool_call_id!r} waits in several agent calls ({calls}); "
                    "name the agent call (`call_id`)"
                )
        future = self._waiting.get(keys[0]) if keys else None
        if future is None or future.done():
            where = f" in agent call {call_id!r}" if call_id else ""
            return f"no approval waits for tool call {tool_call_id!r}{where}"
        future.set_result(answer)
        return ""
