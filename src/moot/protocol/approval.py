"""The approval seam: what a policy sees of a tool call about to run, and what it answers.

Both sides depend on it: the runtime asks (`moot.core.approve`), policies answer
(`moot.permissions`, a hook, a library user's own). Plan mode's words live here too, because
the runtime tells the model and the policy refuses in the same terms.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

import msgspec

from moot.protocol.modes import ModeName


class SideEffect(StrEnum):
    """What running a tool can change; decides approval and whether calls may run in parallel."""

    READ_ONLY = "read_only"
    """Only reads; safe to run alongside other read-only calls and without approval."""
    WRITES_WORKSPACE = "writes_workspace"
    """Changes files in the workspace."""
    RUNS_COMMANDS = "runs_commands"
    """Runs programs, which may do anything the sandbox allows."""
    NETWORK = "network"
    """Talks to the outside world."""


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
    """A policy's answer: allow, deny, or ask the person."""

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
    runs_with_rules: tuple[str, ...] = ()
    """For `ask`: allow rules that would let such a call run without asking, checked by
    deciding it again with them; empty when no allow rule would (an ask rule or a protected
    path stands in the way), so that a refusal where nobody answers never suggests one."""
    runs_in_modes: tuple[ModeName, ...] = ()
    """For `ask`: the other permission modes such a call would run in without asking, checked
    the same way (never the mode it asked in; none for a protected path)."""


class ApprovalPolicy(Protocol):
    """Settles tool calls that need no person; what it cannot settle, it asks."""

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
