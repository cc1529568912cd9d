"""The hook points of one agent call: build each event's input, run the hooks, record a `hook_ran`.

The loop (`moot.core.loop.CallRunner`) decides what an outcome does to the run; this module only
runs hooks and records what they said, so the fold (`moot.core.fold`) can apply it the same way
live and on resume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from msgspec.structs import replace

from moot.hooks.outcome import HookOutcome
from moot.hooks.runner import Hooks
from moot.protocol import events as ev
from moot.protocol.approval import Verdict
from moot.protocol.events import HookEventName
from moot.protocol.messages import ToolCall

if TYPE_CHECKING:
    from moot.core.call_state import CallState
    from moot.core.run import RunContext
    from moot.tools.base import ToolResult

MAX_STOP_BLOCKS = 3
"""Times per run Stop hooks may send the model back to work; after that the run may end."""


class CallHooks:
    """Runs the hooks of one call and records each event's outcome as a `hook_ran`."""

    def __init__(self, run: RunContext, call: CallState, hooks: Hooks) -> None:
        self.run, self.call, self.hooks = run, call, hooks

    @property
    def can_ask(self) -> bool:
        return self.hooks.can_ask

    async def session_start(self, source: str) -> ev.HookRan | None:
        """SessionStart: `source` is "startup" or "resume" (matchers see it)."""
        return await self._fire("SessionStart", {"source": source}, subject=source)

    async def prompt(self, text: str) -> ev.HookRan | None:
        """UserPromptSubmit, before the run's first model call."""
        return await self._fire("UserPromptSubmit", {"prompt": text})

    async def pre_tool(self, tc: ToolCall) -> ev.HookRan | None:
        """PreToolUse, before the approval policy sees the call."""
        payload = {"tool_name": tc.name, "tool_input": tc.arguments, "tool_use_id": tc.id}
        return await self._fire("PreToolUse", payload, subject=tc.name, tool_call_id=tc.id)

    async def post_tool(self, tc: ToolCall, result: ToolResult) -> ev.HookRan | None:
        """PostToolUse, once the tool's result is recorded."""
        payload = {
            "tool_name": tc.name,
            "tool_input": tc.arguments,
            "tool_use_id": tc.id,
            "tool_response": {"content": result.content, "is_error": result.is_error},
        }
        return await self._fire("PostToolUse", payload, subject=tc.name, tool_call_id=tc.id)

    async def stop(self) -> bool:
        """Stop hooks, as the run is about to end; True when they send the model back to work.

        At most `MAX_STOP_BLOCKS` times per run: after that a block is recorded as ignored, so
        a hook that always blocks cannot keep a run alive forever.
        """
        blocks = self.call.stop_blocks
        outcome = await self.hooks.run("Stop", {**self._base(), "stop_hook_active": blocks > 0})
        if outcome is None:
            return False
        fields = _fields(outcome)
        if outcome.decision == "block" and blocks >= MAX_STOP_BLOCKS:
            fields.update(
                decision="none",
                context="",
                reason=f"ignored: Stop hooks already sent the model back {blocks} times",
            )
        self.run.record(self.call, ev.HookRan(**fields))
        return fields["decision"] == "block"

    async def pre_compact(self, trigger: str, focus: str = "") -> ev.HookRan | None:
        """PreCompact, before a compaction summarises the call's conversation."""
        payload = {"trigger": trigger, "custom_instructions": focus}
        return await self._fire("PreCompact", payload, subject=trigger)

    async def notify(self, message: str) -> ev.HookRan | None:
        """Notification: the person is needed (an approval waits)."""
        payload = {"message": message, "notification_type": "permission_prompt"}
        return await self._fire("Notification", payload, subject="permission_prompt")

    def _base(self) -> dict[str, Any]:
        mode = self.run.mode() or "default"
        return {"session_id": self.run.session_id, "permission_mode": mode}

    async def _fire(
        self,
        event: HookEventName,
        payload: dict[str, Any],
        *,
        subject: str | None = None,
        tool_call_id: str | None = None,
    ) -> ev.HookRan | None:
        outcome = await self.hooks.run(event, {**self._base(), **payload}, subject=subject)
        if outcome is None:
            return None
        recorded = self.run.record(
            self.call, ev.HookRan(tool_call_id=tool_call_id, **_fields(outcome))
        )
        assert isinstance(recorded, ev.HookRan)
        return recorded


def _fields(outcome: HookOutcome) -> dict[str, Any]:
    return {
        "hook_event": outcome.event,
        "commands": outcome.commands,
        "decision": outcome.decision,
        "reason": outcome.reason,
        "context": outcome.context,
        "updated_input": outcome.updated_input,
        "stop": outcome.stop,
        "stop_reason": outcome.stop_reason,
    }


def with_hook(
    verdict: Verdict, said: ev.HookRan | None, *, can_ask: bool
) -> tuple[Verdict, Literal["policy", "hook"]]:
    """The policy's verdict on a tool call, with what its PreToolUse hooks said.

    Deny rules still win over a hook's `allow`, which only spares the person the question (or
    lifts the refusal that stands for a question nobody can answer, `Verdict.unasked`), and
    never one only the person may answer (`Verdict.firm`: a protected path, a plan); a
    hook's `ask` asks even where the policy would allow (and refuses where nobody can answer).

    Returns:
        The verdict, and who settled it for the `approval_decided` event.
    """
    if said is None or said.decision in ("none", "deny", "block"):
        return verdict, "policy"
    if verdict.decision == "deny" and not (verdict.unasked and said.decision == "allow"):
        return verdict, "policy"
    if verdict.firm and said.decision == "allow":
        return verdict, "policy"  # a protected path or a plan: only the person answers
    reason = said.reason or f"a PreToolUse hook said {said.decision}"
    if said.decision == "allow":
        spared = verdict.decision == "ask" or verdict.unasked
        return Verdict("allow", reason), "hook" if spared else "policy"
    if not can_ask:
        return Verdict("deny", f"{reason}; a run nobody watches cannot ask"), "hook"
    return replace(verdict, decision="ask", reason=reason), "policy"
