"""The model step of an agent call (the `model_pending` state): one model turn, recorded.

Limits are checked before the request; a request over the compaction threshold compacts the
call's messages first, and one that still cannot fit the model's window ends the call
(`context_window`). Deltas are recorded as they stream; a provider error ends the call
(`CallEnded`), keeping what arrived, except a first overflow, which compacts and asks once more.
The person's own call (several starting agents) has no model: it hands the prompt to the
starting agents, then answers with their results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from moot.core.assemble import TurnBuilder
from moot.core.call_scope import CallScope
from moot.core.limits import LimitReached, check_before_model
from moot.core.peers import CALL_AGENT, PERSON, system_prompt
from moot.core.run import CallEnded
from moot.protocol import events as ev
from moot.protocol.messages import ToolCall, ToolResultMessage
from moot.protocol.states import StopReason
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

if TYPE_CHECKING:
    from moot.protocol.events import CompactTrigger
    from moot.providers.catalog import ModelInfo


class ModelStep:
    """Asks the call's model for its next turn and records the answer.

    Args:
        scope: The call.
        deliver: Hands the call what reached its inbox (`PeerCalls.deliver`), once the limits
            allow another model call and before the request is built.
    """

    def __init__(self, scope: CallScope, deliver: Callable[[], None]) -> None:
        self.scope = scope
        self.run, self.call = scope.run, scope.call
        self.deliver = deliver

    async def ask(self) -> None:
        """One model turn of the call, recorded as `model_responded` and `usage_recorded`.

        Raises:
            LimitReached: A limit forbids the call, or the request cannot fit the window.
            CallEnded: The provider failed (`provider_error`).
        """
        scope, call, run = self.scope, self.call, self.run
        if scope.person:
            self._person_decides()
            return
        check_before_model(run.limits, run.fold.totals, errors=call.errors, stale=call.stale)
        if run.settings.before_request is not None:
            await run.settings.before_request()  # the MCP servers' tools, on a first request
        self.deliver()
        scope.agent = run.agents[call.agent]  # the session may have renewed its instructions
        if call.depth == 0 and run.fold.turn_model:
            # A custom command's `model`: this run's root call only; its peers keep their own.
            scope.agent = replace(scope.agent, model=run.fold.turn_model)
        provider = run.provider_for(scope.agent)
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
            scope.record(
                ev.Error(source="provider", message=str(exc), retryable=True, model=provider.name)
            )
            await self._compact(provider, info, "overflow")
            turn = await self._stream(self._request(provider, info), provider, last_try=True)
        self._responded(provider.name, turn, partial=False)

    def _request(self, provider: Provider, info: ModelInfo | None) -> ModelRequest:
        call, run = self.call, self.run
        images = info is None or info.images
        return ModelRequest(
            model=provider.name,
            system=self._system_prompt(),
            # A view of the call's messages, weighed as they grew: no copy of the
            # conversation, and no walk of it to check the request against the window.
            messages=call.view(images=images, data_of=run.store.attachment_data),
            tools=run.specs_for(self.scope.agent),
            agent=self.scope.agent.name,
        )

    async def _stream(
        self, request: ModelRequest, provider: Provider, *, last_try: bool = False
    ) -> TurnBuilder:
        """One model turn, its deltas recorded as they come. An overflow before any output
        is raised for `ask` to compact (unless `last_try`); every other error ends the
        turn here."""
        record = self.scope.record
        turn = TurnBuilder()
        try:
            async for delta in provider.stream(request):
                turn.add(delta)
                if isinstance(delta, TextPart):
                    record(ev.TextDelta(text=delta.text))
                elif isinstance(delta, ThinkingPart) and delta.text:
                    record(ev.ThinkingDelta(text=delta.text))
        except ProviderError as exc:
            if not last_try and not turn.has_output and is_context_overflow(exc):
                raise
            # The provider has already retried what was worth retrying (providers/retry.py,
            # and the fallback router's other models): asking again here would multiply its
            # tries (4 x 5 requests against a server that stays down) and hide its message.
            record(
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
            raise CallEnded(StopReason.PROVIDER_ERROR, turn.text) from exc
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

        if self.scope.hooks is not None:
            await self.scope.hooks.pre_compact(trigger)
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
            agent=self.scope.agent.name,
            window=info.context_window,
        )
        if plan.replaced or plan.elided:
            self.scope.record(ev.ContextCompacted(trigger=trigger, **msgspec.structs.asdict(plan)))

    def _person_decides(self) -> None:
        """The person's own call, with no model: first it hands the prompt to every starting
        agent (one `call_agent` each, run at once), then it answers with their tagged results."""
        run, call = self.run, self.call
        # Its own turn's results: what came after the prompt (the conversation holds earlier
        # turns' too), not a walk of the whole conversation.
        this_turn = call.messages[run.fold.prompt_at :]
        results = [m for m in this_turn if isinstance(m, ToolResultMessage)]
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
        self.scope.record(ev.ModelResponded(model=PERSON, text=text, tool_calls=calls))

    def _system_prompt(self) -> str:
        call, run = self.call, self.run
        extra = run.settings.extra_instructions
        entry = call.depth == 0 or (call.depth == 1 and call.caller == PERSON)
        if run.settings.extra_scope != "all" and not entry:
            extra = ""
        # The person's own call (several starting agents) is the person: `user` reaches it.
        parent = PERSON if call.caller == PERSON else call.parent_call_id or PERSON
        return system_prompt(
            self.scope.agent,
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
        self.scope.record(
            ev.ModelResponded(
                model=model,
                text=turn.text,
                thinking=turn.thinking,
                tool_calls=() if partial else turn.tool_calls(self.call.tool_call_ids),
                finish_reason=turn.finish_reason,
                partial=partial,
            ),
        )
        self.scope.record(
            ev.UsageRecorded(model=model, usage=turn.usage, cost_usd=turn.cost_usd or 0.0)
        )
