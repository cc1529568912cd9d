"""The workspace tools `moot mcp serve` offers, and one call of one under moot's permissions.

Each call is settled by the session's approval policy (`decide()` with the settings' rules, the
command line's and the mode), exactly as a model's call would be, and runs with moot's path
policy and sandbox. What would ask the person is put to the MCP client as an elicitation when
the client can answer one; otherwise it is refused with the reason and how to allow it.
Settings hooks do not run for these calls (they belong to a model's run).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from moot.client.session import Session
from moot.protocol.approval import ApprovalRequest, RemembersApprovals, SideEffect, Verdict
from moot.tools.base import Tool, ToolContext, ToolResult, decided_as

SERVED = (
    "read",
    "grep",
    "glob",
    "ls",
    "edit",
    "multi_edit",
    "write",
    "bash",
    "shell_output",
    "kill_shell",
    "repo_map",
    "symbols",
    "git_status",
    "git_diff",
    "git_log",
    "git_show",
    "git_commit",
    "git_branch",
)
"""What another agent gets: files, search, the sandboxed shell, the repo map and git (not the
task list, plan mode or web fetch, which belong to moot's own agent)."""

Ask = Callable[[Verdict, str, dict[str, Any]], Awaitable["Answer"]]
"""Puts a question to the MCP client's person: (the verdict, the tool, its arguments)."""


class Answer:
    """What the person said to an elicitation: allowed (once, or for the session), or not."""

    def __init__(self, allowed: bool, scope: str = "once", why: str = "") -> None:
        self.allowed, self.scope, self.why = allowed, scope, why


class WorkspaceTools:
    """The served tools of one session (its workspace, sandbox, rules and mode).

    Calls that change something run one at a time, as in moot's own runs; reads may overlap.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        runtime = session.runtime
        self.tools: dict[str, Tool] = {n: runtime.tools[n] for n in SERVED if n in runtime.tools}
        self._writing = asyncio.Lock()

    def verdict(self, name: str, arguments: dict[str, Any]) -> tuple[Verdict, ApprovalRequest]:
        """How the session's policy settles a call now."""
        tool = self.tools[name]
        runtime = self.session.runtime
        decided, side_effect, decided_arguments = decided_as(tool, name, arguments)
        request = ApprovalRequest(
            session_id=runtime.session_id,
            agent="mcp-client",
            call_id="mcp",
            tool_call_id=f"mcp_{secrets.token_hex(6)}",
            tool=decided,
            side_effect=side_effect,
            arguments=decided_arguments,
            mode=runtime.mode,
        )
        return runtime.approval.decide(request), request

    def remember(self, rule: str) -> None:
        """Keep an allow rule for the rest of this server's session."""
        policy = self.session.runtime.approval
        if isinstance(policy, RemembersApprovals):
            policy.remember(self.session.runtime.session_id, rule, always=False)

    async def run(
        self, name: str, arguments: dict[str, Any], request: ApprovalRequest
    ) -> ToolResult:
        """Run an allowed call."""
        tool = self.tools[name]
        ctx = ToolContext(
            session_id=request.session_id,
            run_id="mcp",
            call_id=request.call_id,
            agent=request.agent,
            tool_call_id=request.tool_call_id,
            mode=request.mode,
        )
        if tool.side_effect == SideEffect.READ_ONLY:
            return await tool.invoke(arguments, ctx)
        async with self._writing:
            return await tool.invoke(arguments, ctx)


def refusal(verdict: Verdict, name: str) -> str:
    """Why a call that would ask was refused, and how to allow it: only what the verdict says
    would (`Verdict.runs_with_rules`, `runs_in_modes`)."""
    said = f"moot refused {name}: {verdict.reason}. This MCP client cannot ask the person"
    if verdict.firm:
        return f"{said}, and only the person can approve a write of a protected path"
    ways = [f"--permission-mode {mode}" for mode in verdict.runs_in_modes]
    if verdict.runs_with_rules:
        rules = ",".join(verdict.runs_with_rules)
        ways.insert(0, f'--allowedTools "{rules}" (or the rule in the settings)')
    if not ways:
        return f"{said}, and no allow rule or mode lets it run without the person's approval"
    return f"{said}; start `moot mcp serve` with {' or '.join(ways)}"
