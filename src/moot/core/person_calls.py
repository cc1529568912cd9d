"""The person's own tool calls (`RunTool`): a tool the person runs by hand, outside every run.

Such a call is decided in `bypassPermissions` mode (`PERSON_MODE`): the person typed it, so no
question is asked (they would be the one asked), but a deny rule holds for them as for any
model, and with it the files it hides. Its answer is one `tool_ran` event, whatever happens:
a result, an error, or an interrupt (`Interrupt`, `Shutdown`) before it finished.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from moot.core.peers import PERSON
from moot.core.run import RecordSession
from moot.protocol import events as ev
from moot.protocol.approval import ApprovalPolicy, ApprovalRequest
from moot.protocol.ids import new_id
from moot.protocol.modes import ModeName
from moot.tools.base import (
    FinishedThenInterrupted,
    SideEffect,
    Tool,
    ToolContext,
    ToolResult,
    as_text,
    decided_as,
)

PERSON_MODE: ModeName = "bypassPermissions"
"""The mode a person's own tool call is decided in: only deny rules speak (see `RunTool`)."""


class PersonCalls:
    """Runs the person's `RunTool` calls, each in a task of its own, and answers each.

    Args:
        session_id: The session the calls belong to.
        tools: The model's tools, which the person may run too.
        person_tools: Tools only the person runs.
        approval: The session's approval policy (its deny rules hold for the person).
        mode: The session's permission mode now, which a tool reads (`ToolContext.mode`).
        record_session: Records the session event that answers a call.
    """

    def __init__(
        self,
        *,
        session_id: str,
        tools: Mapping[str, Tool],
        person_tools: Mapping[str, Tool],
        approval: ApprovalPolicy,
        mode: Callable[[], ModeName | None],
        record_session: RecordSession,
    ) -> None:
        self.session_id = session_id
        self.tools, self.person_tools = tools, person_tools
        self.approval = approval
        self.mode = mode
        self.record_session = record_session
        self.running: dict[asyncio.Task[None], tuple[str, str]] = {}
        """The calls under way: each one's tool and the submission id of its `RunTool`."""
        self._ran: set[str] = set()
        """Submissions whose `tool_ran` is recorded while their task is still ending."""

    def refusal(self, tool: str, side_effect: SideEffect, arguments: dict[str, Any]) -> str:
        """Why a deny rule forbids the person this call ("" when none does)."""
        request = ApprovalRequest(
            session_id=self.session_id,
            agent=PERSON,
            call_id="",
            tool_call_id="",
            tool=tool,
            side_effect=side_effect,
            arguments=arguments,
            mode=PERSON_MODE,
        )
        verdict = self.approval.decide(request)
        if verdict.decision == "deny" and not verdict.unasked:
            return verdict.reason or "refused by the permission rules"
        return ""

    def start(self, name: str, arguments: dict[str, Any], submission: str) -> None:
        """Start the call `RunTool(name, arguments)` asked for, or refuse it (no such tool, a
        deny rule): `op_refused` or, once it ends, `tool_ran`."""
        tool = self.tools.get(name) or self.person_tools.get(name)
        if tool is None:
            every = ", ".join(sorted([*self.tools, *self.person_tools]))
            reason = f"no tool {name!r} in this session; tools: {every}"
        else:
            reason = self.refusal(*decided_as(tool, name, arguments))
        if reason:
            self.record_session(
                ev.OpRefused(op="run_tool", reason=reason, submission_id=submission)
            )
            return
        assert tool is not None
        started = time.perf_counter()
        task = asyncio.get_running_loop().create_task(
            self._run(tool, arguments, submission, started), name=f"moot-tool-{name}"
        )
        self.running[task] = (name, submission)

        def ended(task: asyncio.Task[None]) -> None:
            self.running.pop(task, None)
            if task.cancelled() and submission not in self._ran:
                # Cancelled before it began: it never reached its own `tool_ran`.
                self._answer(name, arguments, submission, started, None)
            self._ran.discard(submission)

        task.add_done_callback(ended)

    def cancel(self) -> list[tuple[str, str]]:
        """Interrupt every call under way (each still answers its `RunTool` with its
        `tool_ran`); the tool and the `RunTool`'s submission id of each call stopped."""
        return [self.running[task] for task in list(self.running) if task.cancel()]

    def interrupt(self, submission: str) -> bool:
        """Interrupt every call under way for the `Interrupt` `submission`, which
        `run_tools_interrupted` answers (each call still answers its `RunTool` with its
        `tool_ran`); whether any was stopped."""
        stopped = self.cancel()
        if stopped:
            tools, submissions = zip(*stopped, strict=True)
            self.record_session(
                ev.RunToolsInterrupted(
                    tools=tools, submissions=submissions, submission_id=submission
                )
            )
        return bool(stopped)

    async def done(self) -> None:
        """Wait until every call under way has ended (and recorded its `tool_ran`)."""
        while self.running:
            await asyncio.gather(*self.running, return_exceptions=True)

    async def _run(
        self, tool: Tool, arguments: dict[str, Any], submission: str, started: float
    ) -> None:
        ctx = ToolContext(
            session_id=self.session_id,
            run_id="",  # no run: nothing is snapshotted for a rewind, nothing is folded
            call_id="",
            agent=PERSON,
            tool_call_id=new_id("person"),
            mode=self.mode(),
        )
        try:
            result = await tool.invoke(dict(arguments), ctx)
        except FinishedThenInterrupted as done:  # its result stands (an edit made)
            self._answer(tool.name, arguments, submission, started, done.result)
            raise
        except asyncio.CancelledError:
            self._answer(tool.name, arguments, submission, started, None)
            raise
        self._answer(tool.name, arguments, submission, started, result)

    def _answer(
        self,
        name: str,
        arguments: dict[str, Any],
        submission: str,
        started: float,
        result: ToolResult | None,
    ) -> None:
        self._ran.add(submission)
        stopped = result is None
        result = result or ToolResult.error("Interrupted before it finished.")
        self.record_session(
            ev.ToolRan(
                tool=name,
                arguments=arguments,
                content=as_text(result.content),
                is_error=result.is_error,
                duration_ms=(time.perf_counter() - started) * 1000,
                interrupted=stopped,
                display=dict(result.display),
                submission_id=submission,
            )
        )
