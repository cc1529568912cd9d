"""What one agent call does with its peers: the calls it makes and the messages it trades.

A call may call a peer and wait for its answer (`call_agent`), start one in the background
(`call_agent(background=true)`, `spawn_background_agent`), send a message to a running call or
the person (`send_message`) and read what reached it (`get_messages`, and its inbox at each
step). Each peer call is driven by a `CallRunner` of its own, in a task of its own (`drive`),
so that `CancelAgent` can end it and its subtree alone. A call ends after every call it made:
`PeerCalls.stop_callees` cancels what is still open and waits for each end, and a callee no
task drives any more is ended by `end_undriven`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from moot.core.call_scope import CallScope
from moot.core.call_state import CallState
from moot.core.peers import MAX_WAIT_S, PERSON, SPAWN, tagged
from moot.core.run import RunContext
from moot.protocol import events as ev
from moot.protocol.ids import new_id
from moot.protocol.messages import ToolCall
from moot.protocol.states import RunState, StopReason, state_for
from moot.tools.base import ToolResult

DriveCall = Callable[[CallState], Coroutine[Any, Any, CallState]]
"""Drives a call of the run to its end (`CallRunner(run, call).drive()`)."""


def open_callees(run: RunContext, call: CallState) -> list[CallState]:
    """The calls `call` made (waited for, or in the background) that have not ended."""
    return [
        c
        for c in run.fold.calls.values()
        if c.parent_call_id == call.call_id and c.stop_reason is None
    ]


def end_undriven(run: RunContext, call: CallState) -> None:
    """End a call that no task drives any more, as cancelled: its open callees first
    (innermost first), then its started tools (interrupted, never re-run), then its own end.

    Such a call was cancelled before its task's first step (its drive never ran, so nothing
    recorded its end), or a crash left it open while its caller went on without it.
    """
    for child in open_callees(run, call):
        end_undriven(run, child)
    for tool_call in call.running_tools:
        run.record_interrupted(call, tool_call)
    reason = StopReason.USER_CANCELLED
    run.record(
        call, ev.AgentReturned(state=state_for(reason), stop_reason=reason, output=call.text)
    )


def _forget(tasks: dict[str, asyncio.Task[object]], call_id: str, _: object) -> None:
    tasks.pop(call_id, None)


class PeerCalls:
    """One call's peer calls (waited for, or in the background) and its messages.

    Args:
        scope: The call.
        drive: Drives one of the run's calls to its end (each peer call, in a task of its own).
    """

    def __init__(self, scope: CallScope, drive: DriveCall) -> None:
        self.scope = scope
        self.run, self.call = scope.run, scope.call
        self.drive = drive

    # ---- background agents and callees ----------------------------------------------------

    def start_background(self) -> None:
        """Give each of this call's live background agents a task (once: a resume starts the
        ones a crash left running; a spawn starts its own)."""
        run = self.run
        for child_id in sorted(self.call.live_background):
            if child_id not in run.tasks:
                child = run.fold.calls[child_id]
                task = asyncio.get_running_loop().create_task(
                    self.drive(child), name=f"moot-agent-{child.agent}"
                )
                run.tasks[child_id] = task
                task.add_done_callback(partial(_forget, run.tasks, child_id))

    async def stop_callees(self) -> None:
        """Cancel every call this one made that is still open (its background agents, a callee
        it waited for) and wait until each has recorded its end, subtree first: nothing of a
        subtree outlives the call that started it, and every end comes before this call's.
        A callee no task drives any more is ended here (`end_undriven`)."""
        run = self.run
        ids = [c.call_id for c in open_callees(run, self.call)]
        tasks = [run.tasks[i] for i in ids if i in run.tasks and not run.tasks[i].done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.end_undriven_callees()

    def end_undriven_callees(self) -> None:
        """End this call's open callees that no live task drives (see `end_undriven`), unless
        the store failed: then nothing more is written."""
        run = self.run
        if run.failure is not None:
            return
        for child in open_callees(run, self.call):
            task = run.tasks.get(child.call_id)
            if task is None or task.done():
                end_undriven(run, child)

    def background(self, tc: ToolCall) -> bool:
        """Whether this peer call starts a background agent (only in runs that allow them)."""
        settings = self.run.settings
        disabled = tc.name == SPAWN and SPAWN in settings.disabled_tools
        if not settings.allow_background_agents or disabled:
            return False
        return tc.name == SPAWN or tc.arguments.get("background") is True

    async def call_peer(self, tc: ToolCall) -> ToolResult:
        """`call_agent` or `spawn_background_agent`: the callee's tagged answer, or word that
        it started in the background. A resumed call finds its callee by the tool call."""
        run, call = self.run, self.call
        name, message = tc.arguments.get("agent_name"), tc.arguments.get("message")
        child_id = run.fold.children.get((call.call_id, tc.id))
        if child_id is None:
            if not isinstance(name, str) or name not in run.agents or not isinstance(message, str):
                peers = ", ".join(run.agents)
                return ToolResult.error(
                    f"call_agent needs `agent_name` (one of: {peers}) and a `message` string."
                )
            background = self.background(tc)
            if background and run.live_background() >= run.limits.max_background_agents:
                return ToolResult.error(
                    f"{run.limits.max_background_agents} background agents are already running "
                    "in this session; wait for one to return (its result arrives as a message)."
                )
            child_id = new_id("call")
            run.record_as(
                ev.AgentCalled(
                    agent=name,
                    call_id=child_id,
                    parent_call_id=call.call_id,
                    caller=call.agent,
                    message=message,
                    depth=call.depth + 1,
                    tool_call_id=tc.id,
                    mode=run.mode(),
                    background=background,
                    with_history=run.settings.pass_history,
                ),
            )
        child = run.fold.calls[child_id]
        if child.background:
            self.start_background()
            return ToolResult(
                f"Started {child.agent} in the background; its task id is {child.call_id}. "
                "Go on with your work: its answer arrives as a message at one of your next steps."
            )
        if not child.state.terminal:
            await self._drive_callee(child)
        # Tagged whether one peer answers or several, as the seed does: the caller always reads
        # which agent produced which result.
        if child.state is RunState.COMPLETED:
            return ToolResult(tagged(child.agent, child.output))
        why = child.output or child.last_error  # a provider that gave up leaves only its error
        failed = f"{child.state} ({child.stop_reason})" + (f": {why}" if why else "")
        return ToolResult.error(tagged(child.agent, failed))

    async def _drive_callee(self, child: CallState) -> None:
        """Drive a callee in a task of its own, so that `CancelAgent` can end it (and its
        subtree) alone: the caller then reads that it was cancelled and goes on. Cancelling the
        caller cancels the callee with it."""
        run = self.run
        task = asyncio.get_running_loop().create_task(
            self.drive(child), name=f"moot-agent-{child.agent}"
        )
        run.tasks[child.call_id] = task
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the caller itself is being cancelled
        finally:
            run.tasks.pop(child.call_id, None)
            if task.cancelled() and child.stop_reason is None and run.failure is None:
                # Cancelled before its first step (the caller's own cancel reached it there):
                # its drive never ran, so its end is recorded here, before the caller's.
                end_undriven(run, child)

    # ---- messages -------------------------------------------------------------------------

    def deliver(self) -> None:
        """Hand the call what reached its inbox, at its next step (`messages_delivered`)."""
        if self.call.inbox:
            self.scope.record(ev.MessagesDelivered(count=len(self.call.inbox)))

    async def await_messages(self) -> None:
        """Wait until a message or a background return reaches this call (while some
        background agent of it is alive, so that something will); the wait is recorded
        (`waiting_for_message`) so that every view of the call tree shows it."""
        call, run = self.call, self.run
        waiting = run.wakeups.setdefault(call.call_id, asyncio.Event())
        recorded = False
        while not call.inbox and call.live_background:
            self.start_background()
            if not recorded:
                self.scope.record(ev.WaitingForMessage())
                recorded = True
            waiting.clear()
            await waiting.wait()

    def could_hear(self) -> bool:
        """Whether anyone could still message this call: the person (a front end that can),
        a background agent of its own, or any open call that is not waiting for its answer."""
        run, call = self.run, self.call
        if run.settings.person_replies or call.live_background:
            return True
        calls = run.fold.calls
        waiting = {call.call_id}
        node = call
        while not node.background and (parent := calls.get(node.parent_call_id or "")):
            waiting.add(parent.call_id)  # blocked on `call_agent` until this call answers
            node = parent
        return any(c.stop_reason is None for i, c in calls.items() if i not in waiting)

    async def _await_inbox(self, seconds: float) -> bool:
        """Wait at most `seconds` for a message or a background return to reach this call;
        whether one did."""
        call = self.call
        waiting = self.run.wakeups.setdefault(call.call_id, asyncio.Event())
        deadline = asyncio.get_running_loop().time() + seconds
        while not call.inbox:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            waiting.clear()
            try:
                async with asyncio.timeout(left):
                    await waiting.wait()
            except TimeoutError:
                return bool(call.inbox)
        return True

    def send_message(self, tc: ToolCall) -> ToolResult:
        """`send_message`: to a running call (by task id or agent name) or the person."""
        run, call = self.run, self.call
        to, text = tc.arguments.get("task_id"), tc.arguments.get("message")
        if not isinstance(to, str) or not isinstance(text, str):
            return ToolResult.error("send_message needs `task_id` and a `message` string.")
        if to == PERSON or run.fold.person_call(to):
            self.scope.record(
                ev.MessageSent(sender=call.agent, to_call_id=None, to_agent=PERSON, text=text)
            )
            return ToolResult("Message sent to the person.")
        receiver = run.fold.live_call(to)
        if receiver is None:
            return ToolResult.error(
                f"No running agent with task id or name {to!r}; running: "
                + (", ".join(run.fold.running_tasks()) or "none")
            )
        self.scope.record(
            ev.MessageSent(
                sender=call.agent, to_call_id=receiver.call_id, to_agent=receiver.agent, text=text
            )
        )
        return ToolResult(f"Message sent to {receiver.agent} (task id {receiver.call_id}).")

    async def get_messages(self, tc: ToolCall) -> ToolResult:
        """What this task received so far; with `wait_seconds`, first wait (bounded by
        `MAX_WAIT_S` and the run's wall-clock limit) until something new reaches it."""
        wait = tc.arguments.get("wait_seconds", 0)
        if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
            return ToolResult.error("get_messages: `wait_seconds` is a number of seconds, >= 0.")
        seconds = min(float(wait), MAX_WAIT_S)
        wall = self.run.limits.max_wall_seconds
        if wall is not None:
            seconds = min(seconds, max(0.0, wall - self.run.fold.totals.elapsed))
        if seconds > 0 and not self.call.inbox and not self.could_hear():
            # `moot -p`, alone: waiting would only burn the run's time.
            return ToolResult(
                "Nothing can message you here (the person cannot reply in this session, and "
                "no peer or background agent of yours is running): go on without waiting."
            )
        arrived = True
        if seconds > 0 and not self.call.inbox:
            # Recorded, so the call tree shows the wait; a resume finds the tool started and
            # unfinished and records it as interrupted (never re-run): what arrived meanwhile
            # is still delivered at the call's next step.
            self.scope.record(ev.WaitingForMessage(timeout_s=seconds, tool_call_id=tc.id))
            arrived = await self._await_inbox(seconds)
        received = [*self.call.received, *self.call.inbox]
        listing = "\n\n".join(w.for_model() for w in received)
        if not arrived:
            none = f"No new message arrived in {seconds:g} s."
            return ToolResult(f"{none} Received before:\n\n{listing}" if received else none)
        return ToolResult(listing or "No messages yet.")
