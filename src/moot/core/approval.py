"""The one approval seam every tool call passes through.

A policy settles what needs no person (allow, deny); what it cannot settle becomes an
`approval_requested` event out and waits for an `Approve` or `Deny` op back. Permission rules
and modes plug in here as a policy (`moot.permissions.policy.RulesPolicy`); without one,
`AllowAll` settles everything (the Python API's default).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Protocol, runtime_checkable

import msgspec

from moot.protocol.modes import ModeName
from moot.tools.base import SideEffect

EXIT_PLAN_MODE = "exit_plan_mode"
"""The tool a model calls to present its plan; approving the call leaves plan mode."""
PLAN_MODE_NOTE = (
    "[moot: plan mode. Explore with read-only tools and change nothing: edits and commands "
    f"are refused. When you have a plan, call {EXIT_PLAN_MODE}(plan) with it in markdown; the "
    "person approves it, or answers with what to change.]"
)
"""What the model reads after the person's prompt when a run begins in plan mode."""


class ApprovalRequest(msgspec.Struct, frozen=True):
    """A tool call about to run, as a policy sees it."""

    session_id: str
    agent: str
    call_id: str
    tool_call_id: str
    tool: str
    side_effect: SideEffect
    arguments: dict[str, Any]
    mode: ModeName | None = None
    """The session's permission mode as the call is decided (None: the session has no modes)."""


class Verdict(msgspec.Struct, frozen=True):
    decision: Literal["allow", "deny", "ask"]
    reason: str = ""
    preview: str = ""
    """For `ask`: what the person should look at (a diff, the exact command)."""
    suggestions: tuple[str, ...] = ()
    """For `ask`: allow rules that would let calls like this run ("for the session", "always")."""
    firm: bool = False
    """For `ask`: only the person may answer; a PreToolUse hook's `allow` does not lift it (a
    write to a protected path, a plan)."""
    unasked: bool = False
    """For `deny`: it stands for a question nobody is there to answer (a headless run), not for
    a rule; a PreToolUse hook's `allow` may lift it, as it would have spared the question."""


class ApprovalPolicy(Protocol):
    def decide(self, request: ApprovalRequest) -> Verdict: ...


@runtime_checkable
class RemembersApprovals(Protocol):
    """A policy that can keep an approval beyond one call."""

    def remember(self, session_id: str, rule: str, *, always: bool) -> None:
        """Allow calls matching `rule` for the session; `always` also saves it for later."""
        ...


@runtime_checkable
class HasModes(Protocol):
    """A policy that decides by permission mode (`ApprovalRequest.mode`): a runtime given one
    has modes, starting in `default_mode` unless told otherwise."""

    @property
    def default_mode(self) -> ModeName: ...


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
