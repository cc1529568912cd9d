"""The agent loop: one handler per run state, until the call reaches a terminal state.

Every decision is read from the fold (core/fold.py) after the event that caused it is stored,
so a resumed call re-enters the same handler the crashed one was in. Non-happy exits are
exceptions, caught in exactly one place: `CallRunner.drive`. A call whose drive never ran (its
task cancelled before its first step) or that a crash left behind its caller is ended by
`end_undriven`, before the call that made it ends.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from moot.core.agent import Agent
from moot.core.approve import ApprovalStep
from moot.core.assemble import TurnBuilder
from moot.core.fold import CallState, fingerprint
from moot.core.limits import LimitReached, check_before_model, check_spend
from moot.core.peers import (
    CALL_AGENT,
    FINISH,
    GET_MESSAGES,
    MAX_WAIT_S,
    PEER_CALLS,
    PERSON,
    SEND_MESSAGE,
    SPAWN,
    system_prompt,
    tagged,
)
from moot.core.run import RunContext
from moot.protocol import events as ev
from moot.protocol.ids import new_id
from moot.protocol.messages import ToolCall, ToolResultMessage, without_images
from moot.protocol.states import RunState, StopReason, state_for
from moot.providers.base import (
    ModelRequest,
    Provider,
    ProviderError,
    TextPart,
    ThinkingPart,
    estimate_tokens,
    is_context_overflow,
    model_info,
)
from moot.tools.base import SideEffect, ToolContext, ToolResult, as_text

if TYPE_CHECKING:
    from moot.core.gate import GateDecision
    from moot.core.hook_points import CallHooks
    from moot.protocol.events import CompactTrigger
    from moot.providers.catalog import ModelInfo


_PERSON_AGENT = Agent("person")
"""What the loop reads as the agent of the person's own call: no model, no tools of its own."""


def _forget(tasks: dict[str, asyncio.Task[object]], call_id: str, _: object) -> None:
    tasks.pop(call_id, None)


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


class _Ended(Exception):
    """The call ends now with this outcome (failures and gate stops)."""

    def __init__(self, reason: StopReason, output: str = "") -> None:
        super().__init__(reason)
        self.reason, self.output = reason, output


class CallRunner:
    """Drives one agent call through the run state machine."""

    def __init__(self, run: RunContext, call: CallState) -> None:
        self.run = run
        self.call = call
        # The person's own call (several starting agents) has no model and no agent of its own.
        self.person = call.agent == PERSON
        self.agent = run.agents[call.agent] if not self.person else _PERSON_AGENT
        self.hooks: CallHooks | None = None
        if run.hooks is not None:
            from moot.core.hook_points import CallHooks  # lazy: without hooks, never imported

            self.hooks = CallHooks(run, call, run.hooks)
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
        call = self.call
        try:
            self._start_background()  # after a resume: its background agents go on
            if self.hooks is not None and call.parent_call_id is None:
                await self._opening_hooks()
            while not call.state.terminal:
                self._check_hook_stop()
                await self._handlers[call.state]()
        except LimitReached as stop:
            await self._stop_callees()
            self._record(ev.LimitHit(stop_reason=stop.reason, detail=stop.detail))
            self._end(stop.reason, call.text)
        except _Ended as end:
            await self._stop_callees()
            self._end(end.reason, end.output)
        except asyncio.CancelledError:
            await self._stop_callees()
            if (failure := self.run.failure) is not None:
                raise failure from None  # the store failed (a full disk): nothing more is written
            self._interrupt_started_tools()
            self._end(StopReason.USER_CANCELLED, call.text)
            raise
        except Exception as exc:
            if call.state.terminal:
                raise
            await self._stop_callees()
            if (failure := self.run.failure) is not None:
                if failure is exc:
                    raise
                raise failure from None  # the store failed: nothing more is written
            self._record(ev.Error(source="internal", message=f"{type(exc).__name__}: {exc}"))
            self._end(StopReason.INTERNAL_ERROR, "")
        finally:
            self.run.wakeups.pop(call.call_id, None)
        return call

    # ---- background agents -------------------------------------------------------------------

    def _start_background(self) -> None:
        """Give each of this call's live background agents a task (once: a resume starts the
        ones a crash left running; a spawn starts its own)."""
        run = self.run
        for child_id in sorted(self.call.live_background):
            if child_id not in run.tasks:
                child = run.fold.calls[child_id]
                task = asyncio.get_running_loop().create_task(
                    CallRunner(run, child).drive(), name=f"moot-agent-{child.agent}"
                )
                run.tasks[child_id] = task
                task.add_done_callback(partial(_forget, run.tasks, child_id))

    async def _stop_callees(self) -> None:
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
        self._end_undriven_callees()

    def _end_undriven_callees(self) -> None:
        """End this call's open callees that no live task drives (see `end_undriven`), unless
        the store failed: then nothing more is written."""
        run = self.run
        if run.failure is not None:
            return
        for child in open_callees(run, self.call):
            task = run.tasks.get(child.call_id)
            if task is None or task.done():
                end_undriven(run, child)

    async def _await_messages(self) -> None:
        """Wait until a message or a background return reaches this call (while some
        background agent of it is alive, so that something will); the wait is recorded
        (`waiting_for_message`) so that every view of the call tree shows it."""
        call, run = self.call, self.run
        waiting = run.wakeups.setdefault(call.call_id, asyncio.Event())
        recorded = False
        while not call.inbox and call.live_background:
            self._start_background()
            if not recorded:
                self._record(ev.WaitingForMessage())
                recorded = True
            waiting.clear()
            await waiting.wait()

    def _could_hear(self) -> bool:
        """Whether anyone could still message this call: the person (a front end that can),
        a background agent of its own, or any open call that is not waiting for its answer."""
        run, call = self.run, self.call
        if run.person_replies or call.live_background:
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

    def _deliver(self) -> None:
        if self.call.inbox:
            self._record(ev.MessagesDelivered(count=len(self.call.inbox)))

    # ---- recording -------------------------------------------------------------------------

    def _record(self, event: ev.Event) -> ev.Event:
        return self.run.record(self.call, event)

    def _move(self, target: RunState) -> None:
        self._record(ev.StateChanged(from_state=self.call.state, to_state=target))

    def _end(self, reason: StopReason, output: str) -> None:
        self._end_undriven_callees()  # a call ends after every call it made
        state, totals = state_for(reason), self.run.fold.totals
        if self.call.parent_call_id is None:
            self._turn_end()
            self._record(
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
            self._record(ev.AgentReturned(state=state, stop_reason=reason, output=output))

    def _turn_end(self) -> None:
        """What the session does as the turn ends (an auto-commit), recorded before the end.

        Synchronous, so it also runs when an interrupt ends the turn; a failure is the
        session's, not the run's, so it is recorded as an error and the turn still ends."""
        turn_end = self.run.turn_end
        if turn_end is None:
            return
        try:
            events = turn_end(self.run.fold.prompt)
        except Exception as exc:
            events = [ev.Error(source="session", message=f"as the turn ended: {exc}")]
        for event in events:
            self._record(event)

    def _interrupt_started_tools(self) -> None:
        for tool_call in self.call.running_tools:
            self.run.record_interrupted(self.call, tool_call)

    # ---- states ----------------------------------------------------------------------------

    async def _created(self) -> None:
        limit = self.run.limits.max_call_depth
        if self.call.depth > limit:
            raise LimitReached(
                StopReason.MAX_CALL_DEPTH,
                f"call depth {self.call.depth} is beyond the limit of {limit}",
            )
        self._move(RunState.MODEL_PENDING)

    async def _ask_model(self) -> None:
        call, run = self.call, self.run
        if self.person:
            self._person_decides()
            return
        check_before_model(run.limits, run.fold.totals, errors=call.errors, stale=call.stale)
        self._deliver()
        self.agent = run.agents[call.agent]  # the session may have renewed its instructions
        if call.depth == 0 and run.fold.turn_model:
            # A custom command's `model`: this run's root call only; its peers keep their own.
            self.agent = replace(self.agent, model=run.fold.turn_model)
        provider = run.provider_for(self.agent)
        info = model_info(provider)
        request = self._request(provider, info)
        threshold = self._threshold(info)
        if info is not None and threshold is not None and estimate_tokens(request) > threshold:
            await self._compact(provider, info, "auto")
            request = self._request(provider, info)
        self._check_fits(provider.name, info, request)
        try:
            turn = await self._stream(request, provider, last_try=info is None)
        except ProviderError as exc:
            assert info is not None  # `_stream` raises only an overflow, and only with a window
            # The window was smaller than the catalog said (or the estimate low): compact as
            # if full, and ask once more; a second overflow ends the turn as any error does.
            self._record(
                ev.Error(source="provider", message=str(exc), retryable=True, model=provider.name)
            )
            await self._compact(provider, info, "overflow")
            turn = await self._stream(self._request(provider, info), provider, last_try=True)
        self._responded(provider.name, turn, partial=False)
        self._move(RunState.DECISION_RECEIVED)

    def _request(self, provider: Provider, info: ModelInfo | None) -> ModelRequest:
        call, run = self.call, self.run
        images = info is None or info.images
        messages = call.messages if images else without_images(call.messages)
        return ModelRequest(
            model=provider.name,
            system=self._system_prompt(),
            messages=tuple(messages),
            tools=run.specs_for(self.agent),
            agent=self.agent.name,
        )

    async def _stream(
        self, request: ModelRequest, provider: Provider, *, last_try: bool = False
    ) -> TurnBuilder:
        """One model turn, its deltas recorded as they come. An overflow before any output
        is raised for `_ask_model` to compact (unless `last_try`); every other error ends the
        turn here."""
        turn = TurnBuilder()
        try:
            async for delta in provider.stream(request):
                turn.add(delta)
                if isinstance(delta, TextPart):
                    self._record(ev.TextDelta(text=delta.text))
                elif isinstance(delta, ThinkingPart) and delta.text:
                    self._record(ev.ThinkingDelta(text=delta.text))
        except ProviderError as exc:
            if not last_try and not turn.has_output and is_context_overflow(exc):
                raise
            # The provider has already retried what was worth retrying (providers/retry.py,
            # and the fallback router's other models): asking again here would multiply its
            # tries (4 x 5 requests against a server that stays down) and hide its message.
            self._record(
                ev.Error(
                    source="provider",
                    message=str(exc),
                    retryable=exc.retryable,
                    model=provider.name,
                )
            )
            if turn.has_output:
                # Keep what arrived: the person sees it, and the run says why it stopped.
                self._responded(provider.name, turn, partial=True)
            raise _Ended(StopReason.PROVIDER_ERROR, turn.text) from exc
        return turn

    def _threshold(self, info: ModelInfo | None) -> int | None:
        share = self.run.limits.compact_at
        if info is None or share is None:
            return None
        return int(info.context_window * share)

    async def _compact(self, provider: Provider, info: ModelInfo, trigger: CompactTrigger) -> None:
        """Compact this call's messages so the next request fits under the threshold (the
        window, when compaction is off), recorded as `context_compacted` for the fold."""
        from moot.core.compact import KEEP_SHARE, compact, tokens  # lazy: most runs never compact

        if self.hooks is not None:
            await self.hooks.pre_compact(trigger)
        limit = self._threshold(info) or info.context_window
        empty = replace(self._request(provider, info), messages=())
        budget = max(1, limit - estimate_tokens(empty))
        if trigger == "overflow":
            # The server counted more than the estimate: go by what was sent, and halve it.
            budget = min(budget, max(1, tokens(self.call.messages) // 2))
        plan = await compact(
            self.call.messages,
            provider=provider,
            budget=budget,
            keep_tokens=int(budget * KEEP_SHARE),
            agent=self.agent.name,
            window=info.context_window,
        )
        if plan.replaced or plan.elided:
            self._record(ev.ContextCompacted(trigger=trigger, **msgspec.structs.asdict(plan)))

    def _person_decides(self) -> None:
        """The person's own call, with no model: first it hands the prompt to every starting
        agent (one `call_agent` each, run at once), then it answers with their tagged results."""
        run, call = self.run, self.call
        results = [m for m in call.messages if isinstance(m, ToolResultMessage)]
        calls: tuple[ToolCall, ...] = ()
        if results:
            text = "\n".join(r.content for r in results)
        else:
            calls = tuple(
                ToolCall(
                    id=f"start_{i}_{name}",
                    name=CALL_AGENT,
                    arguments={"agent_name": name, "message": run.fold.prompt},
                )
                for i, name in enumerate(run.fold.starting_agents)
            )
            text = ""
        self._record(ev.ModelResponded(model=PERSON, text=text, tool_calls=calls))
        self._move(RunState.DECISION_RECEIVED)

    def _system_prompt(self) -> str:
        call, run = self.call, self.run
        extra = run.extra_instructions
        entry = call.depth == 0 or (call.depth == 1 and call.caller == PERSON)
        if run.extra_scope != "all" and not entry:
            extra = ""
        # The person's own call (several starting agents) is the person: `user` reaches it.
        parent = PERSON if call.caller == PERSON else call.parent_call_id or PERSON
        return system_prompt(
            self.agent,
            list(run.agents.values()),
            call.caller,
            # The person's first agent needs no id of its own (peers reach it by its name),
            # and its prompt stays the same from turn to turn for the provider's cache.
            task_id=call.call_id if call.parent_call_id else "",
            caller_task=parent,
            extra=extra,
            talks=run.talks,
        )

    def _check_fits(self, model: str, info: ModelInfo | None, request: ModelRequest) -> None:
        """Refuse a request that cannot fit the model's context window, before sending it."""
        if info is None:  # a scripted or function provider: no window to fit
            return
        window, estimate = info.context_window, estimate_tokens(request)
        if estimate > window:
            raise LimitReached(
                StopReason.CONTEXT_WINDOW,
                f"the conversation (about {estimate:,} tokens) no longer fits "
                f"{model}'s context window of {window:,} tokens",
            )

    def _responded(self, model: str, turn: TurnBuilder, *, partial: bool) -> None:
        self._record(
            ev.ModelResponded(
                model=model,
                text=turn.text,
                thinking=turn.thinking,
                tool_calls=() if partial else turn.tool_calls(self.call.tool_call_ids),
                finish_reason=turn.finish_reason,
                partial=partial,
            ),
        )
        self._record(ev.UsageRecorded(model=model, usage=turn.usage, cost_usd=turn.cost_usd or 0.0))

    async def _decide(self) -> None:
        call, run = self.call, self.run
        if run.gate is not None and not self.person:
            decision = await self._ask_gate()
            if decision.action == "retry" and call.gate_retries < run.limits.max_gate_retries:
                self._record(ev.GateDecided(action="retry", text=decision.text))
                self._move(RunState.MODEL_PENDING)
                return
            if decision.action == "replace":
                self._record(
                    ev.GateDecided(
                        action="replace", text=decision.text, tool_calls=decision.tool_calls
                    ),
                )
            elif decision.action == "stop":
                self._record(ev.GateDecided(action="stop", text=decision.text))
                raise _Ended(StopReason.GATE_STOPPED, decision.text)
        if call.pending:
            self._move(RunState.TOOL_PENDING)
        elif call.text:
            await self._complete(call.text)
        else:
            self._move(RunState.MODEL_PENDING)  # an empty reply: the agent is still working

    async def _ask_gate(self) -> GateDecision:
        from moot.core.gate import GateDecision, ModelTurn  # not at the top: only gates need it

        totals = self.run.fold.totals
        turn = ModelTurn(
            agent=self.agent.name,
            call_id=self.call.call_id,
            text=self.call.text,
            tool_calls=self.call.pending,
            turns=totals.turns,
            usage=totals.usage,
            cost_usd=totals.cost_usd,
        )
        decision = self.run.gate(turn)  # type: ignore[misc]
        if inspect.isawaitable(decision):
            decision = await decision
        return decision or GateDecision.proceed()

    async def _tools_pending(self) -> None:
        self._move(RunState.APPROVAL_PENDING)

    async def _approve(self) -> None:
        if self.person:  # the person's own hand-over to the starting agents asks nobody
            self._move(RunState.TOOL_RUNNING)
            return
        step = ApprovalStep(self.run, self.call, self.agent, self.hooks, self._check_hook_stop)
        await step.settle_pending()
        runnable = any(tc.id not in self.call.results for tc in self.call.pending)
        self._move(RunState.TOOL_RUNNING if runnable else RunState.OBSERVATION_RECORDED)

    # ---- hooks (the runtime's `hooks`; none run when it has none) -------------------------

    async def _opening_hooks(self) -> None:
        """SessionStart (the runtime's first run) and UserPromptSubmit, before any model call."""
        hooks, call, run = self.hooks, self.call, self.run
        assert hooks is not None
        source, run.session_start = run.session_start, None
        if source is not None:
            await hooks.session_start(source)
            self._check_hook_stop()
        if call.state is RunState.CREATED and not call.prompt_hooked:
            await hooks.prompt(run.fold.prompt)  # a refusal ends the call at the next check

    def _check_hook_stop(self) -> None:
        """End the call if a hook refused its prompt or said `continue: false` (the fold knows)."""
        if self.call.hook_stop is not None:
            raise _Ended(StopReason.HOOK_BLOCKED, self.call.hook_stop)

    async def _complete(self, output: str) -> None:
        """Complete the call, unless messages wait for it or its background agents still run
        (it reads them first), or Stop hooks send the person's agent back to work."""
        if self.call.inbox or self.call.live_background:
            await self._await_messages()
            self._move(RunState.MODEL_PENDING)
            return
        hooks = self.hooks
        if hooks is not None and self.call.parent_call_id is None and await hooks.stop():
            self._move(RunState.MODEL_PENDING)
            return
        self._end(StopReason.COMPLETED, output)

    async def _run_tools(self) -> None:
        call = self.call
        todo = [tc for tc in call.pending if tc.id not in call.results]
        for group in self._groups(todo):
            self._check_hook_stop()
            self._check_before_tools(group)
            if len(group) == 1:
                await self._execute(group[0])
            else:
                async with asyncio.TaskGroup() as tasks:
                    for tc in group:
                        tasks.create_task(self._execute(tc))
        self._move(RunState.OBSERVATION_RECORDED)

    async def _observed(self) -> None:
        if self.call.finish_message is not None:
            output = self.call.finish_message
            if FINISH in self.run.tools_for(self.agent):  # a `finish` of the run's replaced ours
                done = [m for m in self.call.messages if isinstance(m, ToolResultMessage)]
                output = next((m.content for m in reversed(done) if m.name == FINISH), output)
            await self._complete(output)
        else:
            self._move(RunState.MODEL_PENDING)

    def _groups(self, calls: list[ToolCall]) -> list[list[ToolCall]]:
        """Consecutive calls that may overlap share a group; every other call runs alone.

        Read-only tools and peer calls overlap (a peer's own tools pass their own approvals);
        anything that writes, runs commands or reaches the network runs alone, in order.
        """
        tools = self.run.tools_for(self.agent)
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
        if tc.id not in self.call.started:
            self._record(ev.ToolStarted(tool_call_id=tc.id, tool=tc.name, arguments=tc.arguments))
        started = time.perf_counter()
        if tc.arguments_error:
            result = ToolResult.error(
                f"Invalid arguments for {tc.name}: {tc.arguments_error}. "
                "Send a JSON object that matches the tool's schema."
            )
        elif tc.name in self.run.tools_for(self.agent):
            result = await self._invoke(tc)  # a tool of a built-in's name replaces it
        elif tc.name in PEER_CALLS and not self.run.calls_peers(self.agent):
            result = ToolResult.error(f"{self.agent.name} was not given {CALL_AGENT}.")
        elif tc.name in PEER_CALLS and not self._background(tc) and tc.name != CALL_AGENT:
            result = ToolResult.error(f"{SPAWN} is not offered in this run.")
        elif tc.name in PEER_CALLS:
            result = await self._call_peer(tc)
        elif tc.name == SEND_MESSAGE and self.run.offers(self.agent, SEND_MESSAGE):
            result = self._send_message(tc)
        elif tc.name == GET_MESSAGES and self.run.offers(self.agent, GET_MESSAGES):
            result = await self._get_messages(tc)
        elif tc.name == FINISH:
            message = tc.arguments.get("message")
            ok = isinstance(message, str)
            result = ToolResult("Done.") if ok else ToolResult.error("finish needs `message`.")
        else:
            result = await self._invoke(tc)
        self._record(
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
        if violation := result.display.get("sandbox_violation"):
            self._record(ev.Error(source="sandbox", message=str(violation)))
        if self.hooks is not None:
            await self.hooks.post_tool(tc, result)

    async def _invoke(self, tc: ToolCall) -> ToolResult:
        tools = self.run.tools_for(self.agent)
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
                self._record(ev.ToolOutput(tool_call_id=tool_call_id, text=as_text(text)))
            except Exception:
                stopped = True  # the tool's result still holds all of its output
                if self.run.failure is not None and task is not None:
                    task.cancel()

        return emit

    async def _call_peer(self, tc: ToolCall) -> ToolResult:
        run, call = self.run, self.call
        name, message = tc.arguments.get("agent_name"), tc.arguments.get("message")
        child_id = run.fold.children.get((call.call_id, tc.id))
        if child_id is None:
            if not isinstance(name, str) or name not in run.agents or not isinstance(message, str):
                peers = ", ".join(run.agents)
                return ToolResult.error(
                    f"call_agent needs `agent_name` (one of: {peers}) and a `message` string."
                )
            background = self._background(tc)
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
                    with_history=run.pass_history,
                ),
            )
        child = run.fold.calls[child_id]
        if child.background:
            self._start_background()
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
            CallRunner(run, child).drive(), name=f"moot-agent-{child.agent}"
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

    def _background(self, tc: ToolCall) -> bool:
        """Whether this peer call starts a background agent (only in runs that allow them)."""
        run = self.run
        if not run.allow_background or (tc.name == SPAWN and SPAWN in run.disabled_tools):
            return False
        return tc.name == SPAWN or tc.arguments.get("background") is True

    def _send_message(self, tc: ToolCall) -> ToolResult:
        run, call = self.run, self.call
        to, text = tc.arguments.get("task_id"), tc.arguments.get("message")
        if not isinstance(to, str) or not isinstance(text, str):
            return ToolResult.error("send_message needs `task_id` and a `message` string.")
        if to == PERSON or run.fold.person_call(to):
            self._record(
                ev.MessageSent(sender=call.agent, to_call_id=None, to_agent=PERSON, text=text)
            )
            return ToolResult("Message sent to the person.")
        receiver = run.fold.live_call(to)
        if receiver is None:
            return ToolResult.error(
                f"No running agent with task id or name {to!r}; running: "
                + (", ".join(run.fold.running_tasks()) or "none")
            )
        self._record(
            ev.MessageSent(
                sender=call.agent, to_call_id=receiver.call_id, to_agent=receiver.agent, text=text
            )
        )
        return ToolResult(f"Message sent to {receiver.agent} (task id {receiver.call_id}).")

    async def _get_messages(self, tc: ToolCall) -> ToolResult:
        """What this task received so far; with `wait_seconds`, first wait (bounded by
        `MAX_WAIT_S` and the run's wall-clock limit) until something new reaches it."""
        wait = tc.arguments.get("wait_seconds", 0)
        if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
            return ToolResult.error("get_messages: `wait_seconds` is a number of seconds, >= 0.")
        seconds = min(float(wait), MAX_WAIT_S)
        wall = self.run.limits.max_wall_seconds
        if wall is not None:
            seconds = min(seconds, max(0.0, wall - self.run.fold.totals.elapsed))
        if seconds > 0 and not self.call.inbox and not self._could_hear():
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
            self._record(ev.WaitingForMessage(timeout_s=seconds, tool_call_id=tc.id))
            arrived = await self._await_inbox(seconds)
        received = [*self.call.received, *self.call.inbox]
        listing = "\n\n".join(w.for_model() for w in received)
        if not arrived:
            none = f"No new message arrived in {seconds:g} s."
            return ToolResult(f"{none} Received before:\n\n{listing}" if received else none)
        return ToolResult(listing or "No messages yet.")
