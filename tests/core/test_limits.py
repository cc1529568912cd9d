"""Each limit stops the run before the next model call or tool, never after."""

from __future__ import annotations

import itertools

import pytest

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.protocol import events as ev
from moot.protocol.states import RunState, StopReason
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.tools.base import SideEffect, tool
from runtime_helpers import call, kinds, make_runtime, of, run_turn


@tool(side_effect=SideEffect.READ_ONLY)
def look(at: str = "here") -> str:
    """Look somewhere."""
    return f"saw {at}"


@tool(side_effect=SideEffect.READ_ONLY)
def fail() -> str:
    """Always fails."""
    raise OSError("disk on fire")


def endless(*turns: dict) -> FunctionProvider:
    """A model that cycles through `turns` forever."""
    cycle = itertools.cycle(turns)
    return FunctionProvider(lambda request: next(cycle))


def counting_model(usage: dict | None = None, cost: float | None = None) -> FunctionProvider:
    counter = itertools.count(1)

    def model(request: ModelRequest) -> dict:
        n = next(counter)
        return {"tool_calls": [call("look", at=str(n))], "usage": usage, "cost_usd": cost}

    return FunctionProvider(model)


async def stopped(limits: Limits, model: FunctionProvider, tools=(look,)) -> tuple:
    runtime = make_runtime(Agent("main", model=model), tools=tools, limits=limits)
    finished, events = await run_turn(runtime)
    hit = of(events, ev.LimitHit)
    assert len(hit) == 1
    assert finished.state is RunState.STOPPED
    assert finished.stop_reason is hit[0].stop_reason
    # Nothing was asked or run after the limit was hit.
    after = kinds(events[events.index(hit[0]) :], skip_states=True)
    assert after == ["limit_hit", "turn_finished"]
    return finished, events


async def test_max_turns_stops_before_the_next_model_call() -> None:
    finished, events = await stopped(Limits(max_turns=3), counting_model())
    assert finished.stop_reason is StopReason.MAX_TURNS
    assert len(of(events, ev.ModelResponded)) == 3
    assert len(of(events, ev.ToolFinished)) == 3


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (Limits(max_input_tokens=250), StopReason.MAX_INPUT_TOKENS),
        (Limits(max_output_tokens=25), StopReason.MAX_OUTPUT_TOKENS),
        (Limits(max_total_tokens=275), StopReason.MAX_TOTAL_TOKENS),
    ],
)
async def test_token_limits(limits: Limits, reason: StopReason) -> None:
    usage = {"input_tokens": 100, "output_tokens": 10}
    finished, events = await stopped(limits, counting_model(usage=usage))
    assert finished.stop_reason is reason
    # 100/10 per turn: the third call would cross 250 input, 25 output or 275 total tokens.
    assert len(of(events, ev.ModelResponded)) == 3
    assert finished.usage.input_tokens == 300


async def test_cost_limit() -> None:
    finished, events = await stopped(Limits(max_cost_usd=1.0), counting_model(cost=0.4))
    assert finished.stop_reason is StopReason.MAX_COST
    assert len(of(events, ev.ModelResponded)) == 3
    assert finished.cost_usd == pytest.approx(1.2)


@pytest.mark.parametrize(
    ("first", "usage", "limits"),
    [
        (-1000.0, None, Limits(max_cost_usd=1.0, max_turns=20)),
        (float("nan"), None, Limits(max_cost_usd=1.0, max_turns=20)),
        (
            None,
            {"input_tokens": -(10**12), "output_tokens": -(10**12)},
            Limits(max_total_tokens=275, max_turns=20),
        ),
    ],
    ids=["negative cost", "nan cost", "negative tokens"],
)
async def test_a_model_that_reports_a_negative_or_nan_spend_cannot_lift_a_limit(
    first: float | None, usage: dict | None, limits: Limits
) -> None:
    """A reported cost or token count below zero (or NaN) counts as nothing: a model a
    repository names (an agent definition's `model: scripted:...`) could otherwise report
    -1000 USD or -10**12 tokens once, or NaN, and every limit of the session would never trip."""
    counter = itertools.count(1)

    def model(request: ModelRequest) -> dict:
        n = next(counter)
        cost = first if n == 1 else 0.4
        tokens = usage if n == 1 else {"input_tokens": 100, "output_tokens": 10}
        if n == 1 and usage is None:
            tokens = {"input_tokens": 0, "output_tokens": 0}
        return {"tool_calls": [call("look", at=str(n))], "usage": tokens, "cost_usd": cost}

    finished, events = await stopped(limits, FunctionProvider(model))
    assert finished.stop_reason in (StopReason.MAX_COST, StopReason.MAX_TOTAL_TOKENS)
    assert len(of(events, ev.ModelResponded)) == 4  # the first counts nothing, three more


async def test_wall_time_limit_stops_before_the_next_tool() -> None:
    @tool(side_effect=SideEffect.READ_ONLY)
    def slow() -> str:
        """Block for a moment (the limit is half of this)."""
        import time

        time.sleep(0.5)
        return "slow"

    model = endless({"tool_calls": [call("slow"), call("slow")]})
    # Two read-only calls run together; the limit is checked before the next model call.
    # Limits far above what a turn takes before its first tool, however loaded the machine (at
    # 5 ms, a run on a loaded machine stopped before its first model call).
    finished, events = await stopped(Limits(max_wall_seconds=0.25), model, tools=(slow,))
    assert finished.stop_reason is StopReason.MAX_WALL_TIME
    assert len(of(events, ev.ModelResponded)) == 1


async def test_wall_time_is_checked_between_mutating_tools() -> None:
    @tool(side_effect=SideEffect.WRITES_WORKSPACE)
    def slow_write() -> str:
        """Block for a moment."""
        import time

        time.sleep(0.5)
        return "written"

    model = endless({"tool_calls": [call("slow_write"), call("slow_write")]})
    finished, events = await stopped(Limits(max_wall_seconds=0.25), model, tools=(slow_write,))
    assert finished.stop_reason is StopReason.MAX_WALL_TIME
    assert len(of(events, ev.ToolStarted)) == 1


async def test_the_same_call_repeated_stops_before_it_runs_again() -> None:
    model = endless({"tool_calls": [call("look", at="x")]})
    finished, events = await stopped(
        Limits(max_repeated_tool_calls=3, no_progress_window=None), model
    )
    assert finished.stop_reason is StopReason.REPEATED_TOOL_CALL
    assert len(of(events, ev.ToolStarted)) == 3
    assert len(of(events, ev.ModelResponded)) == 4


async def test_no_progress_over_a_window() -> None:
    # A, B, A, B, ... never repeats one call twice in a row, yet learns nothing new.
    model = endless({"tool_calls": [call("look", at="a")]}, {"tool_calls": [call("look", at="b")]})
    finished, events = await stopped(
        Limits(no_progress_window=3, max_repeated_tool_calls=None), model
    )
    assert finished.stop_reason is StopReason.NO_PROGRESS
    # Steps 3..5 each repeat a step from the window; the 6th model call never happens.
    assert len(of(events, ev.ModelResponded)) == 5


async def test_a_provider_error_ends_the_turn_before_the_error_limit_counts_it() -> None:
    # The provider has spent its own retries when an error reaches the loop: the loop does
    # not ask again, so failed model calls never add up to `max_consecutive_errors`.
    model = endless({"error": "overloaded", "retryable": True})
    runtime = make_runtime(Agent("main", model=model), limits=Limits(max_consecutive_errors=3))
    finished, events = await run_turn(runtime)
    assert (finished.state, finished.stop_reason) == (RunState.FAILED, StopReason.PROVIDER_ERROR)
    assert len(of(events, ev.Error)) == 1
    assert not of(events, ev.LimitHit)


async def test_consecutive_tool_errors() -> None:
    model = endless({"tool_calls": [call("fail")]})
    finished, events = await stopped(
        Limits(max_consecutive_errors=2, max_repeated_tool_calls=None, no_progress_window=None),
        model,
        tools=(fail,),
    )
    assert finished.stop_reason is StopReason.CONSECUTIVE_ERRORS
    assert len(of(events, ev.ToolFinished)) == 2


async def test_a_success_resets_the_error_count() -> None:
    model = endless(
        {"tool_calls": [call("fail")]},
        {"tool_calls": [call("look", at="ok")]},
    )
    runtime = make_runtime(
        Agent("main", model=model),
        tools=[look, fail],
        limits=Limits(max_consecutive_errors=2, max_turns=8, no_progress_window=None),
    )
    finished, _ = await run_turn(runtime)
    assert finished.stop_reason is StopReason.MAX_TURNS


async def test_a_request_too_big_for_the_context_window_is_never_sent() -> None:
    from moot.providers.anthropic import AnthropicProvider
    from moot.providers.config import ProviderConfig

    # An unknown model gets the conservative default window (32,768 tokens); nothing listens
    # on port 9, so a request that was sent would fail differently.
    provider = AnthropicProvider(ProviderConfig("anthropic", "no-such-model", "http://127.0.0.1:9"))
    runtime = make_runtime(Agent("main", model=provider))
    finished, events = await run_turn(runtime, "x" * 200_000)
    assert (finished.state, finished.stop_reason) == (RunState.STOPPED, StopReason.CONTEXT_WINDOW)
    assert "context window of 32,768 tokens" in of(events, ev.LimitHit)[0].detail
    assert not of(events, ev.Error)


async def test_a_router_checks_a_request_against_its_smallest_context_window() -> None:
    from moot.providers.anthropic import AnthropicProvider
    from moot.providers.config import ProviderConfig, RetryPolicy
    from moot.providers.router import FallbackProvider

    # claude-haiku-4-5 reads 200,000 tokens; the unknown model only the default 32,768. Either
    # may answer, so a request of ~50,000 tokens is refused before any is sent.
    router = FallbackProvider(
        [
            AnthropicProvider(
                ProviderConfig(
                    "anthropic", model, "http://127.0.0.1:9", retry=RetryPolicy(attempts=1)
                )
            )
            for model in ("claude-haiku-4-5", "no-such-model")
        ]
    )
    runtime = make_runtime(Agent("main", model=router))
    finished, events = await run_turn(runtime, "x" * 200_000)
    assert (finished.state, finished.stop_reason) == (RunState.STOPPED, StopReason.CONTEXT_WINDOW)
    assert "context window of 32,768 tokens" in of(events, ev.LimitHit)[0].detail
    assert not of(events, ev.Error)
