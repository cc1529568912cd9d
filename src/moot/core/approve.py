"""The approval step of an agent call: each pending tool call is settled before any runs.

For each call, in order: PreToolUse hooks (they may refuse it or change its input), the
approval policy's verdict (`decide`, through `core.approval`), what the hooks said weighed in
(`core.hook_points.with_hook`), and, when the verdict asks, the person's answer through the
`Approve`/`Deny` ops. Every settlement is an `approval_decided` event; an answer may also keep
an allow rule or switch the session's mode (an approved plan leaves plan mode).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from msgspec.structs import replace

from moot.core.agent import Agent
from moot.core.approval import Answer
from moot.core.call_state import CallState
from moot.core.run import RunContext
from moot.protocol import events as ev
from moot.protocol.approval import EXIT_PLAN_MODE, ApprovalRequest, RemembersApprovals, Verdict
from moot.protocol.messages import ToolCall
from moot.tools.base import call_scope, decided_as

if TYPE_CHECKING:
    from moot.core.hook_points import CallHooks


class ApprovalStep:
    """Settles the pending tool calls of one agent call (the `approval_pending` state)."""

    def __init__(
        self,
        run: RunContext,
        call: CallState,
        agent: Agent,
        hooks: CallHooks | None,
        check_hook_stop: Callable[[], None],
    ) -> None:
        """Args:
        check_hook_stop: Raises to end the call when a hook said `continue: false`.
        """
        self.run, self.call, self.agent, self.hooks = run, call, agent, hooks
        self._check_hook_stop = check_hook_stop

    def _record(self, event: ev.Event) -> ev.Event:
        return self.run.record(self.call, event)

    async def settle_pending(self) -> None:
        """Decide every pending call not decided yet (a resume skips those already settled)."""
        call = self.call
        for tc in call.pending:
            if tc.id not in call.results and tc.id not in call.decisions:
                await self._settle(tc)

    async def _settle(self, tc: ToolCall) -> None:
        run, call = self.run, self.call
        tc, said = await self._pre_tool_hook(tc)
        if tc.id in call.decisions:
            return  # a PreToolUse hook refused it
        tool = run.tools_for(self.agent).get(tc.name)
        scope = call_scope(call.call_id, tc.id)
        name, side_effect, arguments = decided_as(tool, tc.name, tc.arguments, scope)
        request = ApprovalRequest(
            session_id=run.session_id,
            agent=call.agent,
            call_id=call.call_id,
            tool_call_id=tc.id,
            tool=name,
            side_effect=side_effect,
            arguments=arguments,
            mode=run.mode(),
        )
        verdict = run.approval.decide(request)
        by: Literal["policy", "hook"] = "policy"
        if said is not None and self.hooks is not None:
            from moot.core.hook_points import with_hook  # lazy: without hooks, never imported

            verdict, by = with_hook(verdict, said, can_ask=self.hooks.can_ask)
        if verdict.decision == "deny":
            self._record(
                ev.ApprovalDecided(
                    tool_call_id=tc.id, approved=False, by=by, feedback=verdict.reason
                ),
            )
        elif verdict.decision == "ask":
            answer = await self._ask_person(tc, verdict)
            if self._changed_input_refused(tc, request, answer):
                return
            kept = self._keep(answer, verdict.suggestions)
            self._record(
                ev.ApprovalDecided(
                    tool_call_id=tc.id,
                    approved=answer.approved,
                    by="user",
                    feedback=answer.feedback,
                    scope=answer.scope if kept else "once",
                    rule=kept,
                    submission_id=answer.submission_id,
                    updated_input=answer.updated_input if answer.approved else None,
                ),
            )
            self._switch_mode(tc, answer)
        elif by == "hook":  # a PreToolUse hook allowed what the policy would have asked
            self._record(
                ev.ApprovalDecided(
                    tool_call_id=tc.id, approved=True, by="hook", feedback=verdict.reason
                ),
            )

    def _changed_input_refused(
        self, tc: ToolCall, request: ApprovalRequest, answer: Answer
    ) -> bool:
        """Whether an approval that changes the call's arguments was refused (and recorded so).

        The person (an Agent SDK's callback) approved arguments the policy never saw: it
        decides again on them, so a deny rule holds whatever the answer wrote.
        """
        if not answer.approved or answer.updated_input is None:
            return False
        tool = self.run.tools_for(self.agent).get(tc.name)
        scope = call_scope(self.call.call_id, tc.id)
        name, side_effect, arguments = decided_as(tool, tc.name, answer.updated_input, scope)
        changed = replace(request, tool=name, side_effect=side_effect, arguments=arguments)
        verdict = self.run.approval.decide(changed)
        if verdict.decision != "deny":
            return False
        self._record(
            ev.ApprovalDecided(
                tool_call_id=request.tool_call_id,
                approved=False,
                by="policy",
                feedback=f"the changed input is refused: {verdict.reason}",
                submission_id=answer.submission_id,
            ),
        )
        return True

    async def _pre_tool_hook(self, tc: ToolCall) -> tuple[ToolCall, ev.HookRan | None]:
        """PreToolUse hooks for `tc`, once per call (a resume reuses what they said).

        A refusal is recorded here. Returns the call as it will run (a hook may have changed
        its input) and what the hooks said, for the approval policy's verdict.
        """
        if self.hooks is None:
            return tc, None
        said = self.call.pre_hooks.get(tc.id) or await self.hooks.pre_tool(tc)
        self._check_hook_stop()
        if said is not None and said.decision == "deny" and tc.id not in self.call.decisions:
            reason = said.reason or "no reason given"
            self._record(
                ev.ApprovalDecided(tool_call_id=tc.id, approved=False, by="hook", feedback=reason),
            )
        return next(c for c in self.call.pending if c.id == tc.id), said

    async def _ask_person(self, tc: ToolCall, verdict: Verdict) -> Answer:
        call_id = self.call.call_id
        waiting = self.run.pending.expect(call_id, tc.id)
        try:
            self._record(
                ev.ApprovalRequested(
                    tool_call_id=tc.id,
                    tool=tc.name,
                    arguments=tc.arguments,
                    preview=verdict.preview,
                    reason=verdict.reason,
                    suggested_rules=verdict.suggestions,
                ),
            )
            if self.hooks is not None:
                await self.hooks.notify(f"moot needs your permission to use {tc.name}")
            return await waiting
        finally:
            self.run.pending.discard(call_id, tc.id)

    def _keep(self, answer: Answer, suggestions: tuple[str, ...]) -> str | None:
        """Keep an approval "for the session" or "always" as an allow rule; the rule kept."""
        policy = self.run.approval
        rule = answer.rule or (suggestions[0] if suggestions else None)
        if not answer.approved or answer.scope == "once" or rule is None:
            return None
        if not isinstance(policy, RemembersApprovals):
            return None
        policy.remember(self.run.session_id, rule, always=answer.scope == "always")
        return rule

    def _switch_mode(self, tc: ToolCall, answer: Answer) -> None:
        """Switch the session's mode when an approval says so; an approved plan leaves plan mode."""
        plan = tc.name == EXIT_PLAN_MODE
        previous = self.run.mode()
        if not answer.approved or previous is None:
            return  # the session has no modes
        mode = answer.mode or ("default" if plan else None)
        if mode is None or mode == previous:
            return
        self.run.record_session(
            ev.ModeChanged(
                mode=mode,
                previous=previous,
                by="plan_approval" if plan else "user",
                submission_id=answer.submission_id,
            )
        )
