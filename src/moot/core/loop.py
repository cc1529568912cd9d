"""The agent loop: one handler per run state, until the call reaches a terminal state.

Every decision is read from the fold (core/fold.py) after the event that caused it is stored,
so a resumed call re-enters the same handler the crashed one was in. Non-happy exits are
exceptions, caught in exactly one place: `CallRunner.drive`. A call whose drive never ran (its
task cancelled before its first step) or that a crash left behind its caller is ended by
`end_undriven` (`core/peer_calls.py`), before the call that made it ends.

The drive and the small state handlers are here; the two large steps have modules of their
own (`core/model_step.py`: the model turn; `core/tool_step.py`: the tool calls), as do the
approval step (`core/approve.py`) and a call's peers: the calls it makes, its background
agents and its messages (`core/peer_calls.py`). They share the call through `CallScope`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from moot.core.approve import ApprovalStep
from moot.core.call_scope import CallScope
from moot.core.call_state import CallState
from moot.core.limits import LimitReached
from moot.core.model_step import ModelStep
from moot.core.peer_calls import PeerCalls
from moot.core.peers import FINISH
from moot.core.run import CallEnded, RunContext
from moot.core.tool_step import ToolStep
from moot.protocol import events as ev
from moot.protocol.messages import ToolResultMessage
from moot.protocol.states import RunState, StopReason, state_for

if TYPE_CHECKING:
    from moot.core.gate import GateDecision


class CallRunner:
    """Drives one agent call through the run state machine."""

    def __init__(self, run: RunContext, call: CallState) -> None:
        self.run = run
        self.call = call
        self.scope = CallScope(run, call)
        self.peers = PeerCalls(self.scope, lambda callee: CallRunner(run, callee).drive())
        self.model = ModelStep(self.scope, self.peers.deliver)
        self.tools = ToolStep(self.scope, self.peers)
        self._handlers: dict[RunState, Callable[[], Awaitable[None]]] = {
            RunState.CREATED: self._created,
            RunState.MODEL_PENDING: self._ask_model,
            RunState.DECISION_RECEIVED: self._decide,
            RunState.TOOL_PENDING: self._tools_pending,
            RunState.APPROVAL_PENDING: self._approve,
            RunState.TOOL_RUNNING: self._run_tools,
            RunState.OBSERVATION_RECORDED: self._observed,
        }

    async def drive(self) -> CallState:
        """Run until terminal; every way out records the terminal event exactly once."""
        call, scope = self.call, self.scope
        try:
            self.peers.start_background()  # after a resume: its background agents go on
            if scope.hooks is not None and call.parent_call_id is None:
                await self._opening_hooks()
            while not call.state.terminal:
                scope.check_hook_stop()
                await self._handlers[call.state]()
        except LimitReached as stop:
            await self.peers.stop_callees()
            scope.record(ev.LimitHit(stop_reason=stop.reason, detail=stop.detail))
            self._end(stop.reason, call.text)
        except CallEnded as end:
            await self.peers.stop_callees()
            self._end(end.reason, end.output)
        except asyncio.CancelledError:
            await self.peers.stop_callees()
            if (failure := self.run.failure) is not None:
                raise failure from None  # the store failed (a full disk): nothing more is written
            self._interrupt_started_tools()
            self._end(StopReason.USER_CANCELLED, call.text)
            raise
        except Exception as exc:
            if call.state.terminal:
                raise
            await self.peers.stop_callees()
            if (failure := self.run.failure) is not None:
                if failure is exc:
                    raise
                raise failure from None  # the store failed: nothing more is written
            scope.record(ev.Error(source="internal", message=f"{type(exc).__name__}: {exc}"))
            self._end(StopReason.INTERNAL_ERROR, "")
        finally:
            self.run.wakeups.pop(call.call_id, None)
        return call

    # ---- how a call ends -------------------------------------------------------------------

    def _end(self, reason: StopReason, output: str) -> None:
        self.peers.end_undriven_callees()  # a call ends after every call it made
        state, totals = state_for(reason), self.run.fold.totals
        if self.call.parent_call_id is None:
            self._turn_end()
            self.scope.record(
                ev.TurnFinished(
                    state=state,
                    stop_reason=reason,
                    output=output,
                    turns=totals.turns,
                    usage=totals.usage,
                    cost_usd=totals.cost_usd,
                    duration_ms=totals.elapsed * 1000,
                ),
            )
        else:
            self.scope.record(ev.AgentReturned(state=state, stop_reason=reason, output=output))

    def _turn_end(self) -> None:
        """What the session does as the turn ends (an auto-commit), recorded before the end.

        Synchronous, so it also runs when an interrupt ends the turn; a failure is the
        session's, not the run's, so it is recorded as an error and the turn still ends."""
        turn_end = self.run.settings.turn_end
        if turn_end is None:
            return
        try:
            events = turn_end(self.run.fold.prompt)
        except Exception as exc:
            events = [ev.Error(source="session", message=f"as the turn ended: {exc}")]
        for event in events:
            self.scope.record(event)

    def _interrupt_started_tools(self) -> None:
        for tool_call in self.call.running_tools:
            self.run.record_interrupted(self.call, tool_call)

    async def _complete(self, output: str) -> None:
        """Complete the call, unless messages wait for it or its background agents still run
        (it reads them first), or Stop hooks send the person's agent back to work."""
        if self.call.inbox or self.call.live_background:
            await self.peers.await_messages()
            self.scope.move(RunState.MODEL_PENDING)
            return
        hooks = self.scope.hooks
        if hooks is not None and self.call.parent_call_id is None and await hooks.stop():
            self.scope.move(RunState.MODEL_PENDING)
            return
        self._end(StopReason.COMPLETED, output)

    # ---- states ----------------------------------------------------------------------------

    async def _created(self) -> None:
        limit = self.run.limits.max_call_depth
        if self.call.depth > limit:
            raise LimitReached(
                StopReason.MAX_CALL_DEPTH,
                f"call depth {self.call.depth} is beyond the limit of {limit}",
            )
        self.scope.move(RunState.MODEL_PENDING)

    async def _ask_model(self) -> None:
        await self.model.ask()
        self.scope.move(RunState.DECISION_RECEIVED)

    async def _decide(self) -> None:
        call, run, scope = self.call, self.run, self.scope
        if run.settings.gate is not None and not scope.person:
            decision = await self._ask_gate()
            if decision.action == "retry" and call.gate_retries < run.limits.max_gate_retries:
                scope.record(ev.GateDecided(action="retry", text=decision.text))
                scope.move(RunState.MODEL_PENDING)
                return
            if decision.action == "replace":
                scope.record(
                    ev.GateDecided(
                        action="replace", text=decision.text, tool_calls=decision.tool_calls
                    ),
                )
            elif decision.action == "stop":
                scope.record(ev.GateDecided(action="stop", text=decision.text))
                raise CallEnded(StopReason.GATE_STOPPED, decision.text)
        if call.pending:
            scope.move(RunState.TOOL_PENDING)
        elif call.text:
            await self._complete(call.text)
        else:
            scope.move(RunState.MODEL_PENDING)  # an empty reply: the agent is still working

    async def _ask_gate(self) -> GateDecision:
        from moot.core.gate import GateDecision, ModelTurn  # not at the top: only gates need it

        totals = self.run.fold.totals
        turn = ModelTurn(
            agent=self.scope.agent.name,
            call_id=self.call.call_id,
            text=self.call.text,
            tool_calls=self.call.pending,
            turns=totals.turns,
            usage=totals.usage,
            cost_usd=totals.cost_usd,
        )
        decision = self.run.settings.gate(turn)  # type: ignore[misc]
        if inspect.isawaitable(decision):
            decision = await decision
        return decision or GateDecision.proceed()

    async def _tools_pending(self) -> None:
        self.scope.move(RunState.APPROVAL_PENDING)

    async def _approve(self) -> None:
        scope = self.scope
        if scope.person:  # the person's own hand-over to the starting agents asks nobody
            scope.move(RunState.TOOL_RUNNING)
            return
        step = ApprovalStep(self.run, self.call, scope.agent, scope.hooks, scope.check_hook_stop)
        await step.settle_pending()
        runnable = any(tc.id not in self.call.results for tc in self.call.pending)
        scope.move(RunState.TOOL_RUNNING if runnable else RunState.OBSERVATION_RECORDED)

    async def _run_tools(self) -> None:
        await self.tools.run_pending()
        self.scope.move(RunState.OBSERVATION_RECORDED)

    async def _observed(self) -> None:
        call = self.call
        if call.finish_message is not None:
            output = call.finish_message
            if FINISH in self.run.tools_for(self.scope.agent):  # a run's `finish` replaced ours
                done = [m for m in call.messages if isinstance(m, ToolResultMessage)]
                output = next((m.content for m in reversed(done) if m.name == FINISH), output)
            await self._complete(output)
        else:
            self.scope.move(RunState.MODEL_PENDING)

    # ---- hooks (the runtime's `hooks`; none run when it has none) -------------------------

    async def _opening_hooks(self) -> None:
        """SessionStart (the runtime's first run) and UserPromptSubmit, before any model call."""
        hooks, call, run = self.scope.hooks, self.call, self.run
        assert hooks is not None
        source, run.session_start = run.session_start, None
        if source is not None:
            await hooks.session_start(source)
            self.scope.check_hook_stop()
        if call.state is RunState.CREATED and not call.prompt_hooked:
            await hooks.prompt(run.fold.prompt)  # a refusal ends the call at the next check
