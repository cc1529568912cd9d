"""The work a session runs in a task of its own, one at a time: a turn, the resume of a turn a
crash left open, or a compaction between turns; and the ops that reach into that work (an
`Interrupt`, a message to a running agent, a cancelled peer call).

An op stops work after the work's first step, never before: work cancelled before it began
would end without a word (no `turn_started`, nothing answering the turn or the op). What the
stop ends answers the op; work that ended meanwhile leaves the op refused (`op_refused`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any

from msgspec.structs import replace

from moot.core.agent import Agent
from moot.core.fold import CallState, RunFold
from moot.core.limits import Limits
from moot.core.loop import CallRunner
from moot.core.peer_calls import end_undriven
from moot.core.peers import PEER_CALLS, PERSON
from moot.core.run import RecordSession, RunContext
from moot.core.session import SessionState
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.ids import new_id
from moot.protocol.messages import AttachedFile
from moot.protocol.modes import ModeName
from moot.store.errors import StoreError

NewRun = Callable[[RunFold, str], RunContext]
"""Makes the context of a run of the session (its fold, the submission its events answer)."""


class RuntimeBusy(RuntimeError):
    """Work was started while other work runs: a slip of the runtime's own (`submit` answers a
    busy session with `op_refused` before it gets here)."""


class RunTasks:
    """The session's one piece of work at a time, in a task, and the ops that reach into it.

    Args:
        session: The session state (its unfinished run, its conversations).
        limits: Bounds for each new run.
        new_run: Makes the context of a run (`Runtime`'s agents, tools, policies, settings).
        record_session: Records a session event (an answer to an op).
        closed: Whether the session has shut down (it answers nothing more).
        on_failure: Called when work raised instead of recording its end (the store failed).
        on_finished: Called with a run's fold when the run has recorded `turn_finished`.
    """

    def __init__(
        self,
        *,
        session: SessionState,
        limits: Limits,
        new_run: NewRun,
        record_session: RecordSession,
        closed: Callable[[], bool],
        on_failure: Callable[[], None],
        on_finished: Callable[[RunFold], None],
    ) -> None:
        self._session = session
        self._limits = limits
        self._new_run = new_run
        self._record_session = record_session
        self._closed = closed
        self._on_failure = on_failure
        self._on_finished = on_finished
        self.task: asyncio.Task[None] | None = None
        """The work that runs or ran last."""
        self.run: RunContext | None = None
        """The run under way, if a turn or a resume runs."""
        self.last_finished: ev.TurnFinished | None = None
        """The `turn_finished` of the last run (None if none ran, or it did not finish)."""
        self.failure = ""
        """Why the last work raised instead of recording its end ("" when it did not)."""
        self._stopped_by: str | None = None
        """The `Interrupt` that stopped a compaction, whose end answers it."""
        self._compacting = False
        """The task that runs is a compaction between turns, not a turn."""

    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def busy(self) -> str:
        """Why a new turn must wait: a turn or a compaction runs ("" when neither does)."""
        if not self.running:
            return ""
        if self._compacting:
            return "the conversation is being compacted: wait for it, or interrupt it"
        return "a turn is running: wait for it to end, or interrupt it"

    def start(self, work: Coroutine[Any, Any, None], *, compacting: bool = False) -> None:
        """Run `work` in the session's task.

        Raises:
            RuntimeBusy: Other work runs (`submit` refuses such an op first).
        """
        if self.running:
            work.close()
            raise RuntimeBusy("the session is already running a turn")
        self._stopped_by, self._compacting = None, compacting
        self.failure = ""
        self.task = asyncio.get_running_loop().create_task(work)
        self.task.add_done_callback(self._after)

    def _after(self, task: asyncio.Task[None]) -> None:
        # A run that raised could not record its end (the store failed: a full disk, a
        # damaged file): no turn_finished will come, so nobody may wait for one. The streams
        # end, `failure` says why, and `wait()` raises what the run raised.
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.failure = str(exc) or type(exc).__name__
            self._on_failure()

    async def wait(self) -> ev.TurnFinished | None:
        """Wait for the work under way to end; the last run's `turn_finished` (None if none)."""
        if self.task is not None:
            try:
                await self.task
            except asyncio.CancelledError:
                if not self.task.cancelled():
                    raise  # the waiter itself was cancelled
        return self.last_finished

    def cancel(self) -> None:
        """Stop the work under way at once (the session shuts down)."""
        if self.running:
            assert self.task is not None
            self.task.cancel()

    # ---- runs ------------------------------------------------------------------------------

    async def turn(self, opening: ev.TurnStarted, submission: str) -> None:
        """A new run: `opening` (its `turn_started`) recorded, then its first call driven."""
        fold = RunFold(self._limits, self._session.history)
        self._session.open_run = fold
        run = self._begin(fold, submission)
        run.record_as(opening)
        await self._drive(run)

    async def resume(self, fold: RunFold, submission: str) -> None:
        """Continue an unfinished run; tools that started without a result are not re-run."""
        run = self._begin(fold, submission)
        # A peer call that was running is not a side effect of its own: the callee's call
        # resumes instead (see PeerCalls.call_peer). Every other running tool is interrupted.
        interrupted = [
            (call, tc)
            for call in fold.calls.values()
            if not call.state.terminal
            for tc in call.running_tools
            if tc.name not in PEER_CALLS
        ]
        root = fold.calls[fold.run_id]
        run.record(
            root, ev.RunResumed(interrupted_tool_calls=tuple(tc.id for _, tc in interrupted))
        )
        for call, tc in interrupted:
            run.record_interrupted(call, tc)
        for orphan in orphans(fold):
            # Left open by a moot that ended while closing it (an older moot could): nothing
            # will drive it again, so it ends now, subtree first, before the run goes on.
            if orphan.stop_reason is None:
                end_undriven(run, orphan)
        await self._drive(run)

    def _begin(self, fold: RunFold, submission: str) -> RunContext:
        self.run = self._new_run(fold, submission)
        return self.run

    async def _drive(self, run: RunContext) -> None:
        fold = run.fold
        try:
            await CallRunner(run, fold.calls[fold.run_id]).drive()
        finally:
            for task in list(run.tasks.values()):  # none, unless the store failed mid-run
                task.cancel()
            self.run = None
            self.last_finished = fold.finished
            if fold.finished is not None:
                self._on_finished(fold)

    # ---- compaction between turns ------------------------------------------------------------

    def start_compaction(self, answer: Callable[[], Awaitable[ev.Event]], submission: str) -> None:
        """Compact a conversation between turns: `answer` (`compact_history`) makes the event
        that answers the `Compact`, recorded once it is made."""
        self.start(self._compaction(answer, submission), compacting=True)

    async def _compaction(self, answer: Callable[[], Awaitable[ev.Event]], submission: str) -> None:
        try:
            event = await answer()
        except asyncio.CancelledError:
            # An `Interrupt` (or the session's end) stopped it: nothing was compacted, and
            # that is the answer the interrupt gets.
            reason = "interrupted: nothing was compacted"
            answers = self._stopped_by or submission
            self._record_session(ev.OpRefused(op="compact", reason=reason, submission_id=answers))
            raise
        self._record_session(event)

    # ---- the ops that reach into the work ----------------------------------------------------

    def interrupt(self, submission: str, *, alone: bool) -> None:
        """Stop the turn or compaction under way, after its first step (`Interrupt`).

        Args:
            submission: The `Interrupt`'s id, which what it ends answers.
            alone: Nothing else (no tool call of the person's) answers the interrupt.
        """
        if self.task is not None and self.running:
            loop = asyncio.get_running_loop()
            loop.call_soon(self._stop_work, self.task, submission, alone)
        elif alone:  # what it was sent for (a tool call of the person's) had just ended
            reason = "nothing is running to interrupt: it had ended"
            self._record_session(
                ev.OpRefused(op="interrupt", reason=reason, submission_id=submission)
            )

    def _stop_work(self, task: asyncio.Task[None], submission: str, alone: bool) -> None:
        """Cancel the turn or compaction an `Interrupt` stops; what that ends answers it. One
        that ended meanwhile leaves the interrupt nothing to do, which is its answer (unless
        the person's own tool calls it stopped are)."""
        if task is self.task and not task.done():
            if self.run is not None:
                self.run.submission_id = submission  # what the interrupt ends answers it
            self._stopped_by = submission  # a compaction's end answers it too
            task.cancel()
        elif alone and not self._closed():
            reason = "nothing is running to interrupt: it had ended"
            self._answer_later(
                ev.OpRefused(op="interrupt", reason=reason, submission_id=submission)
            )

    def _answer_later(self, event: ev.Event) -> None:
        """Record a session event from a loop callback, where an exception would only be
        logged: a store that cannot be written (a full disk) leaves the op unanswered, and
        `submit` says so for the next op."""
        with contextlib.suppress(StoreError):
            self._record_session(event)

    def message(self, to: str, text: str, submission: str) -> None:
        """The person is a peer: a message to a running agent, read at its next step."""
        run = self.run
        receiver = run.fold.live_call(to) if run is not None and self.running else None
        if run is None or receiver is None:
            running = ", ".join(run.fold.running_tasks()) if run is not None else ""
            self._record_session(
                ev.OpRefused(
                    op="send_message",
                    reason=f"no running agent {to!r}; running: {running or 'none'}",
                    submission_id=submission,
                )
            )
            return
        run.record_as(
            ev.MessageSent(
                agent=receiver.agent,
                call_id=receiver.call_id,
                parent_call_id=receiver.parent_call_id,
                sender=PERSON,
                to_call_id=receiver.call_id,
                to_agent=receiver.agent,
                text=text,
                submission_id=submission,
            )
        )

    def cancel_agent(self, task_id: str, submission: str) -> None:
        """Cancel a running peer call (background or not): its drive records its subtree's end,
        then its own, each answering the `CancelAgent`; its caller reads that it was cancelled
        and goes on."""
        run = self.run
        task = run.tasks.get(task_id) if run is not None else None
        if run is None or task is None or task.done():
            self._record_session(
                ev.OpRefused(
                    op="cancel_agent",
                    reason=f"no running peer call with task id {task_id!r}",
                    submission_id=submission,
                )
            )
            return
        # After the callee's first step, never before: a task cancelled before it began never
        # runs its drive, which records the end of the call and its subtree.
        loop = asyncio.get_running_loop()
        loop.call_soon(self._cancel_callee, run, task, task_id, submission)

    def _cancel_callee(
        self, run: RunContext, task: asyncio.Task[object], task_id: str, submission: str
    ) -> None:
        if not task.done():
            run.cancelled_by[task_id] = submission  # what the call's end records answers it
            task.cancel()
        elif not self._closed():  # it ended in its first step: nothing was left to cancel
            reason = f"peer call {task_id!r} had ended before it could be cancelled"
            self._answer_later(
                ev.OpRefused(op="cancel_agent", reason=reason, submission_id=submission)
            )


def turn_opening(
    op: ops.UserTurn,
    agents: Mapping[str, Agent],
    entry: Agent,
    *,
    files: Sequence[AttachedFile],
    limits: Limits,
    mode: ModeName | None,
) -> ev.TurnStarted:
    """The `turn_started` of the turn `op` asks for: who gets the prompt (its agent, the
    session's first by default; several starting agents hang under the person's own call),
    with the `@path` files it names, the run's limits and the session's mode.
    """
    starting = tuple(op.agents)
    if len(starting) == 1:
        op = replace(op, agent=starting[0], agents=())
        starting = ()
    agent = agents[op.agent] if op.agent else entry
    return ev.TurnStarted(
        agent=PERSON if starting else agent.name,
        starting_agents=starting,
        call_id=new_id("run"),
        parent_call_id=None,
        prompt=op.text,
        attachments=op.attachments,
        files=tuple(files),
        limits=limits.as_dict(),
        mode=mode,
        model=op.model or "",
        pool=tuple(agents),
    )


def orphans(fold: RunFold) -> list[CallState]:
    """The open calls of an unfinished run that nothing would drive on a resume: their caller
    has ended, or has gone on from the `call_agent` that made them (its result is recorded),
    and they are not a background agent of an open caller (those are started again)."""
    calls = fold.calls
    found = []
    for call in calls.values():
        parent = calls.get(call.parent_call_id or "")
        if call.stop_reason is not None or parent is None:
            continue
        waited_for = {tc.id for tc in parent.running_tools}
        gone_on = not call.background and call.tool_call_id not in waited_for
        if parent.stop_reason is not None or gone_on:
            found.append(call)
    return found
