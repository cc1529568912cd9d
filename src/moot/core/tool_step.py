"""The tool step of an agent call (the `tool_running` state): its approved tool calls, run.

Read-only calls of one turn run concurrently, the others one at a time, in order (`_groups`).
Limits and hook stops are checked before each group, never after. A call's tool result is one
`tool_finished`, whatever it was: a tool of the session, a peer call (`core/peer_calls.py`),
a message, `finish`, or an error the model reads (bad arguments, an unknown tool).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

from moot.core.call_scope import CallScope
from moot.core.fold import fingerprint
from moot.core.limits import LimitReached, check_spend
from moot.core.peer_calls import PeerCalls
from moot.core.peers import CALL_AGENT, FINISH, GET_MESSAGES, PEER_CALLS, SEND_MESSAGE, SPAWN
from moot.protocol import events as ev
from moot.protocol.messages import ToolCall
from moot.protocol.states import StopReason
from moot.tools.base import (
    FinishedThenInterrupted,
    SideEffect,
    ToolContext,
    ToolResult,
    as_text,
)


class ToolStep:
    """Runs the call's pending tool calls that have no result yet, each recorded.

    Args:
        scope: The call.
        peers: The call's peer calls and messages (the peer tools run there).
    """

    def __init__(self, scope: CallScope, peers: PeerCalls) -> None:
        self.scope = scope
        self.run, self.call = scope.run, scope.call
        self.peers = peers

    async def run_pending(self) -> None:
        """Run every pending tool call without a result, group by group.

        Raises:
            LimitReached: The budget is spent, or a tool is called again and again.
            CallEnded: A hook stopped the call.
        """
        call = self.call
        todo = [tc for tc in call.pending if tc.id not in call.results]
        for group in self._groups(todo):
            self.scope.check_hook_stop()
            self._check_before_tools(group)
            if len(group) == 1:
                await self._execute(group[0])
            else:
                async with asyncio.TaskGroup() as tasks:
                    for tc in group:
                        tasks.create_task(self._execute(tc))

    def _groups(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        """Consecutive calls that may overlap share a group; every other call runs alone.

        Read-only tools and peer calls overlap (a peer's own tools pass their own approvals);
        anything that writes, runs commands or reaches the network runs alone, in order.
        """
        tools = self.run.tools_for(self.scope.agent)
        groups: list[list[ToolCall]] = []
        overlapped = False
        for tc in calls:
            tool = tools.get(tc.name)
            overlaps = (
                tc.name in PEER_CALLS
                or tc.name in (SEND_MESSAGE, GET_MESSAGES)
                or (tool is not None and tool.side_effect is SideEffect.READ_ONLY)
            )
            if overlaps and overlapped:
                groups[-1].append(tc)
            else:
                groups.append([tc])
            overlapped = overlaps
        return groups

    def _check_before_tools(self, group: list[ToolCall]) -> None:
        run, call = self.run, self.call
        check_spend(run.limits, run.fold.totals)
        limit = run.limits.max_repeated_tool_calls
        last, repeats = call.last_tool, call.repeats
        for tc in group:
            if tc.id in call.started:
                continue
            digest = fingerprint((tc.name, tc.arguments))
            repeats, last = (repeats + 1 if digest == last else 1), digest
            if limit is not None and repeats > limit:
                raise LimitReached(
                    StopReason.REPEATED_TOOL_CALL,
                    f"{tc.name} was called with the same arguments {repeats} times in a row",
                )

    async def _execute(self, tc: ToolCall) -> None:
        record = self.scope.record
        if tc.id not in self.call.started:
            record(ev.ToolStarted(tool_call_id=tc.id, tool=tc.name, arguments=tc.arguments))
        started = time.perf_counter()
        interrupted: FinishedThenInterrupted | None = None
        try:
            result = await self._result(tc)
        except FinishedThenInterrupted as done:  # its result stands; the interrupt goes on
            result, interrupted = done.result, done
        record(
            ev.ToolFinished(
                tool_call_id=tc.id,
                tool=tc.name,
                content=as_text(result.content),
                is_error=result.is_error,
                attachments=tuple(result.attachments),
                display=dict(result.display),
                duration_ms=(time.perf_counter() - started) * 1000,
            ),
        )
        if interrupted is not None:
            raise interrupted
        if violation := result.display.get("sandbox_violation"):
            record(ev.Error(source="sandbox", message=str(violation)))
        if self.scope.hooks is not None:
            await self.scope.hooks.post_tool(tc, result)

    async def _result(self, tc: ToolCall) -> ToolResult:
        """What the call returns: a tool's result, a peer's, a message's, or an error."""
        run, agent, peers = self.run, self.scope.agent, self.peers
        if tc.arguments_error:
            return ToolResult.error(
                f"Invalid arguments for {tc.name}: {tc.arguments_error}. "
                "Send a JSON object that matches the tool's schema."
            )
        if tc.name in run.tools_for(agent):
            return await self._invoke(tc)  # a tool of a built-in's name replaces it
        if tc.name in PEER_CALLS and not run.calls_peers(agent):
            return ToolResult.error(f"{agent.name} was not given {CALL_AGENT}.")
        if tc.name in PEER_CALLS and not peers.background(tc) and tc.name != CALL_AGENT:
            return ToolResult.error(f"{SPAWN} is not offered in this run.")
        if tc.name in PEER_CALLS:
            return await peers.call_peer(tc)
        if tc.name == SEND_MESSAGE and run.offers(agent, SEND_MESSAGE):
            return peers.send_message(tc)
        if tc.name == GET_MESSAGES and run.offers(agent, GET_MESSAGES):
            return await peers.get_messages(tc)
        if tc.name == FINISH:
            message = tc.arguments.get("message")
            ok = isinstance(message, str)
            return ToolResult("Done.") if ok else ToolResult.error("finish needs `message`.")
        return await self._invoke(tc)

    async def _invoke(self, tc: ToolCall) -> ToolResult:
        tools = self.run.tools_for(self.scope.agent)
        tool = tools.get(tc.name)
        if tool is None:
            names = ", ".join(sorted([*tools, CALL_AGENT, FINISH]))
            return ToolResult.error(f"Unknown tool {tc.name!r}. Available tools: {names}.")
        ctx = ToolContext(
            session_id=self.run.session_id,
            run_id=self.run.fold.run_id,
            call_id=self.call.call_id,
            agent=self.call.agent,
            tool_call_id=tc.id,
            mode=self.run.mode(),
            emit=self._emitter(tc.id),
        )
        return await tool.invoke(tc.arguments, ctx)

    def _emitter(self, tool_call_id: str) -> Callable[[str], None]:
        """A callback that streams tool output; safe to call from a sync tool's thread.

        It never raises: it runs in callbacks (a command's output as it arrives), where an
        exception would only be logged, once per piece of output. Output that cannot be
        recorded ends the stream of this tool's output; when the store failed (a full disk),
        the call's task is cancelled too, and its drive raises the failure (`RunContext.failure`).
        """
        loop, owner = asyncio.get_running_loop(), threading.get_ident()
        task = asyncio.current_task()
        stopped = False

        def emit(text: str) -> None:
            nonlocal stopped
            if threading.get_ident() != owner:
                loop.call_soon_threadsafe(emit, text)
                return
            if stopped or self.run.failure is not None:
                return
            try:
                self.scope.record(ev.ToolOutput(tool_call_id=tool_call_id, text=as_text(text)))
            except Exception:
                stopped = True  # the tool's result still holds all of its output
                if self.run.failure is not None and task is not None:
                    task.cancel()

        return emit
