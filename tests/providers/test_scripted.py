"""The scripted and function providers, seen from the seam: a ModelRequest in, deltas out."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from moot.core.agent import Agent
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Usage, UserMessage
from moot.providers.base import (
    Delta,
    Finish,
    ModelRequest,
    Provider,
    ProviderError,
    ResumesFromLog,
    TextPart,
    ThinkingPart,
    ToolCallArgs,
    ToolCallStart,
    UsageReport,
)
from moot.providers.scripted import FunctionProvider, ScriptedProvider, ScriptedTurn
from moot.store.memory import MemoryStore


def request(agent: str = "main", text: str = "go") -> ModelRequest:
    return ModelRequest(
        model="scripted",
        system="You are a test.",
        messages=(UserMessage(content=text),),
        agent=agent,
    )


async def deltas(provider: Provider, agent: str = "main") -> list[Delta]:
    return [d async for d in provider.stream(request(agent))]


async def answer(provider: Provider, agent: str = "main") -> str:
    return "".join(d.text for d in await deltas(provider, agent) if isinstance(d, TextPart))


def tool_calls(played: list[Delta]) -> list[tuple[str, str, str]]:
    """(id, name, argument text) of each tool call in a turn's deltas."""
    starts = {d.index: d for d in played if isinstance(d, ToolCallStart)}
    args = {d.index: "" for d in starts.values()}
    for d in played:
        if isinstance(d, ToolCallArgs):
            args[d.index] += d.text
    return [(starts[i].id, starts[i].name, args[i]) for i in sorted(starts)]


# ---- one turn's deltas ------------------------------------------------------------------------


async def test_text_streams_in_chunks_then_usage_then_finish() -> None:
    provider = ScriptedProvider([{"text": "hello world", "chunk_size": 4}])

    played = await deltas(provider)

    assert played[:3] == [TextPart("hell"), TextPart("o wo"), TextPart("rld")]
    assert isinstance(played[3], UsageReport)
    assert played[4:] == [Finish("end_turn")]


async def test_a_string_is_a_text_turn_in_one_default_sized_chunk() -> None:
    played = await deltas(ScriptedProvider(["short answer"]))

    assert played[0] == TextPart("short answer")


async def test_a_chunk_size_below_one_streams_one_character_at_a_time() -> None:
    played = await deltas(ScriptedProvider([{"text": "abc", "chunk_size": 0}]))

    assert [d for d in played if isinstance(d, TextPart)] == [TextPart(c) for c in "abc"]


async def test_thinking_comes_before_text() -> None:
    played = await deltas(ScriptedProvider([{"thinking": "hmm", "text": "yes"}]))

    assert played[:2] == [ThinkingPart("hmm"), TextPart("yes")]


async def test_tool_calls_send_a_mapping_as_json_and_a_string_as_is() -> None:
    provider = ScriptedProvider(
        [
            {
                "text": "Looking.",
                "tool_calls": [
                    {"name": "read", "arguments": {"path": "a.py", "lines": [1, 2]}, "id": "t1"},
                    {"name": "write", "arguments": '{"path": "b.py", '},
                    {"name": "finish"},
                ],
            }
        ]
    )

    played = await deltas(provider)

    (read, write, finish) = tool_calls(played)
    assert read[:2] == ("t1", "read")
    assert json.loads(read[2]) == {"path": "a.py", "lines": [1, 2]}
    assert write[1:] == ("write", '{"path": "b.py", ')
    assert finish[1:] == ("finish", "{}")
    assert played[-1] == Finish("tool_use")
    # Tool calls follow the text, and each call's start comes before its arguments.
    kinds = [type(d).__name__ for d in played]
    assert kinds.index("TextPart") < kinds.index("ToolCallStart") < kinds.index("ToolCallArgs")


async def test_generated_tool_call_ids_are_unique_and_name_agent_and_turn() -> None:
    two_calls = {"tool_calls": [{"name": "read"}, {"name": "read"}]}
    provider = ScriptedProvider([two_calls, two_calls], agents={"peer": [two_calls]})

    ids = [
        call_id
        for agent in ("main", "main", "peer")
        for call_id, _, _ in tool_calls(await deltas(provider, agent))
    ]

    assert ids == [
        "call_main_0_0",
        "call_main_0_1",
        "call_main_1_0",
        "call_main_1_1",
        "call_peer_0_0",
        "call_peer_0_1",
    ]


async def test_usage_and_cost_are_reported_as_scripted() -> None:
    usage = {"input_tokens": 120, "output_tokens": 30, "cache_read_tokens": 100}
    provider = ScriptedProvider([{"text": "hi", "usage": usage, "cost_usd": 0.25}])

    played = await deltas(provider)

    (report,) = [d for d in played if isinstance(d, UsageReport)]
    assert report == UsageReport(Usage(**usage), 0.25)


async def test_usage_defaults_to_a_rough_count_and_no_price() -> None:
    played = await deltas(ScriptedProvider([{"text": "x" * 40, "thinking": "y" * 40}]))

    (report,) = [d for d in played if isinstance(d, UsageReport)]
    assert report == UsageReport(Usage(input_tokens=0, output_tokens=20), None)


@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        pytest.param({"text": "done"}, "end_turn", id="text"),
        pytest.param({"tool_calls": [{"name": "finish"}]}, "tool_use", id="tool calls"),
        pytest.param({"text": "cut of", "finish_reason": "length"}, "length", id="scripted"),
    ],
)
async def test_finish_reason(turn: dict[str, object], reason: str) -> None:
    played = await deltas(ScriptedProvider([turn]))

    assert played[-1] == Finish(reason)


async def test_an_error_is_raised_after_the_text_has_streamed() -> None:
    provider = ScriptedProvider(
        [{"text": "half an", "error": "boom", "tool_calls": [{"name": "x"}]}]
    )
    stream = provider.stream(request())

    first = await anext(stream)
    with pytest.raises(ProviderError) as raised:
        await anext(stream)

    assert first == TextPart("half an")
    assert raised.value.message == "boom"
    assert raised.value.provider == "scripted"
    assert raised.value.retryable is False
    assert "boom" in str(raised.value)


async def test_an_error_can_be_retryable() -> None:
    provider = ScriptedProvider([{"error": "overloaded", "retryable": True}, "after retry"])

    with pytest.raises(ProviderError) as raised:
        await deltas(provider)

    assert raised.value.retryable is True
    assert await answer(provider) == "after retry"


async def test_the_delay_comes_before_the_first_delta() -> None:
    stream = ScriptedProvider([{"text": "late", "delay": 30}]).stream(request())

    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(stream), timeout=0.05)


async def test_a_rate_paces_the_text_in_tokens_per_second() -> None:
    """`rate` streams at that many tokens a second (4 characters each), by the clock: 400
    characters at 1,000 tokens/s take 0.1 s, the last delta due at 99 ms."""
    provider = ScriptedProvider([{"text": "abcd" * 100, "chunk_size": 4, "rate": 1000}])
    loop = asyncio.get_running_loop()
    began = loop.time()
    arrived = [
        loop.time() - began async for d in provider.stream(request()) if isinstance(d, TextPart)
    ]

    assert len(arrived) == 100
    assert arrived[-1] >= 0.099
    assert arrived[0] < 0.05  # the first delta is not held back


# ---- whole scripts ---------------------------------------------------------------------------


async def test_turns_play_in_order_and_an_exhausted_script_names_the_agent() -> None:
    provider = ScriptedProvider(["one", "two"], name="scripted:demo.yaml")

    assert [await answer(provider), await answer(provider)] == ["one", "two"]
    with pytest.raises(ProviderError) as raised:
        await deltas(provider, "reviewer")

    assert "'reviewer'" in str(raised.value)
    assert "no turn left" in str(raised.value)
    assert raised.value.provider == "scripted:demo.yaml"


async def test_agents_with_their_own_script_play_it_and_others_share_turns() -> None:
    provider = ScriptedProvider(
        ["shared 1", "shared 2"], agents={"coder": ["coder 1", "coder 2"], "tester": ["tester 1"]}
    )

    played = [
        await answer(provider, agent) for agent in ("coder", "tester", "main", "coder", "other")
    ]

    assert played == ["coder 1", "tester 1", "shared 1", "coder 2", "shared 2"]
    with pytest.raises(ProviderError, match="'tester'"):
        await deltas(provider, "tester")


async def test_fast_forward_skips_turns_already_played() -> None:
    provider = ScriptedProvider(["s0", "s1", "s2", "s3"], agents={"coder": ["c0", "c1"]})

    provider.fast_forward("coder", 1)
    provider.fast_forward("main", 1)
    provider.fast_forward("other", 1)  # no script of its own: it spends shared turns

    assert await answer(provider, "coder") == "c1"
    assert await answer(provider, "main") == "s2"


async def test_resume_counts_the_calls_the_log_shows_to_this_script_only() -> None:
    provider = ScriptedProvider(["s0", "s1", "s2", "s3"], agents={"coder": ["c0", "c1", "c2"]})
    mine = provider.name
    log = [
        ev.ModelResponded(agent="coder", model=mine, text="c0"),
        # A broken stream: the partial answer and its error are one call.
        ev.ModelResponded(agent="coder", model=mine, text="c", partial=True),
        ev.Error(agent="coder", source="provider", message="reset", model=mine),
        ev.ModelResponded(agent="main", model="anthropic/claude", text="not mine"),
        ev.Error(agent="main", source="provider", message="down", model="openai/gpt"),
        ev.Error(agent="main", source="tool", message="a tool failed"),
        ev.ModelResponded(agent="other", model=mine, text="s0"),
    ]

    provider.resume(log)

    assert await answer(provider, "coder") == "c2"
    assert await answer(provider, "main") == "s1"


def test_which_providers_play_scripts() -> None:
    scripted, function = ScriptedProvider(), FunctionProvider(lambda r: "x")

    assert isinstance(scripted, Provider)
    assert isinstance(scripted, ResumesFromLog)
    assert isinstance(function, Provider)
    assert not isinstance(function, ResumesFromLog)


def test_a_bad_turn_is_refused_when_the_script_is_built() -> None:
    with pytest.raises(ValueError, match="bogus"):
        ScriptedProvider([{"text": "hi", "bogus": 1}])


# ---- script files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        pytest.param(
            "demo.yaml",
            "turns:\n  - text: one\n  - text: two\n    finish_reason: length\n",
            id="yaml turns",
        ),
        pytest.param("demo.yml", "- one\n- {text: two, finish_reason: length}\n", id="bare list"),
        pytest.param(
            "demo.json",
            json.dumps({"turns": ["one", {"text": "two", "finish_reason": "length"}]}),
            id="json turns",
        ),
    ],
)
async def test_from_file(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")

    provider = ScriptedProvider.from_file(path)

    # Named by its whole path: a resumed session finds its script from any directory, and two
    # scripts of one name in different folders keep their own places (`ResumesFromLog`).
    assert provider.name == f"scripted:{path.resolve()}"
    assert await answer(provider) == "one"
    assert (await deltas(provider))[-1] == Finish("length")


async def test_from_file_with_agents(tmp_path: Path) -> None:
    path = tmp_path / "peers.json"
    path.write_text(json.dumps({"agents": {"a": ["from a"], "b": ["from b"]}}), encoding="utf-8")

    provider = ScriptedProvider.from_file(str(path))

    assert [await answer(provider, "b"), await answer(provider, "a")] == ["from b", "from a"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        pytest.param("s.yaml", None, "cannot read script", id="missing"),
        pytest.param("s.yaml", "turns: [a\n", "not valid YAML", id="yaml syntax"),
        pytest.param("s.json", "{not json", "Expecting property name", id="json syntax"),
        pytest.param("s.yaml", "", "needs a list of turns", id="empty"),
        pytest.param("s.yaml", "text: hi\n", "needs a list of turns", id="a turn, not a script"),
        pytest.param("s.yaml", "turns: []\nagent: {}\n", "unknown keys ['agent']", id="typo"),
        pytest.param("s.yaml", "turns: hello\n", "`turns:` must be a list", id="turns a string"),
        pytest.param("s.yaml", "agents: [a, b]\n", "`agents:` must map", id="agents a list"),
        pytest.param("s.yaml", "agents: {a: 3}\n", "`agents:` must map", id="agent not a list"),
        pytest.param("s.yaml", "- {txt: hi}\n", "unknown field `txt`", id="unknown turn field"),
        pytest.param(
            "s.yaml",
            "- {tool_calls: [{arguments: {}}]}\n",
            "required field `name` - at `$.tool_calls[0]`",
            id="call no name",
        ),
    ],
)
def test_a_bad_file_is_a_value_error_naming_it(
    tmp_path: Path, name: str, content: str | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")

    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        ScriptedProvider.from_file(path)

    assert str(path) in str(raised.value)


# ---- the function provider -----------------------------------------------------------------


async def test_a_sync_function_sees_each_request_and_returns_text() -> None:
    seen: list[ModelRequest] = []

    def model(req: ModelRequest) -> str:
        seen.append(req)
        return f"turn {len(seen)} for {req.agent}"

    provider = FunctionProvider(model)

    assert await answer(provider, "coder") == "turn 1 for coder"
    assert await answer(provider, "tester") == "turn 2 for tester"
    assert [r.agent for r in seen] == ["coder", "tester"]
    assert seen[0].messages == (UserMessage(content="go"),)


async def test_an_async_function_may_return_a_mapping_with_tool_calls() -> None:
    async def model(req: ModelRequest) -> dict[str, object]:
        await asyncio.sleep(0)
        return {"text": "calling", "tool_calls": [{"name": "read", "arguments": {"p": 1}}]}

    provider = FunctionProvider(model, name="fn:test")
    first, second = await deltas(provider), await deltas(provider)

    assert provider.name == "fn:test"
    (call,) = tool_calls(first)
    assert call[1:] == ("read", '{"p": 1}')
    assert first[-1] == Finish("tool_use")
    assert call[0] != tool_calls(second)[0][0]


async def test_a_function_may_return_a_scripted_turn() -> None:
    turn = ScriptedTurn(text="no", error="refused", retryable=True)
    provider = FunctionProvider(lambda req: turn)

    with pytest.raises(ProviderError) as raised:
        await deltas(provider)

    assert raised.value.retryable is True
    assert raised.value.message == "refused"


async def test_each_script_moves_on_only_for_the_agents_that_play_it(tmp_path) -> None:
    """Two agents on two scripts: a turn of one never advances the other's script."""
    (tmp_path / "a.yaml").write_text("turns: [a1, a2]\n")
    (tmp_path / "b.yaml").write_text("turns: [b1, b2]\n")
    agents = [
        Agent("a", model=f"scripted:{tmp_path / 'a.yaml'}"),
        Agent("b", model=f"scripted:{tmp_path / 'b.yaml'}"),
    ]
    store = MemoryStore()
    first = Runtime(agents, store=store)
    first.submit(ops.UserTurn(text="hi", agent="a"))
    assert (await first.wait()).output == "a1"
    first.submit(ops.Shutdown())  # one runtime per session: the next one claims it
    # A new runtime on the same session: a has played one turn, b none.
    second = Runtime(agents, store=store, session_id=first.session_id)
    second.submit(ops.UserTurn(text="hi", agent="b"))
    assert (await second.wait()).output == "b1"
    second.submit(ops.UserTurn(text="hi", agent="a"))
    assert (await second.wait()).output == "a2"


async def test_a_provider_object_resumes_where_its_session_left_off() -> None:
    store = MemoryStore()
    first = Runtime([Agent("a", model=ScriptedProvider(["one", "two"]))], store=store)
    first.submit(ops.UserTurn(text="hi"))
    assert (await first.wait()).output == "one"
    first.submit(ops.Shutdown())  # one runtime per session: the next one claims it
    again = Runtime(
        [Agent("a", model=ScriptedProvider(["one", "two"]))],
        store=store,
        session_id=first.session_id,
    )
    again.submit(ops.UserTurn(text="hi"))
    assert (await again.wait()).output == "two"


def test_a_turn_built_in_code_is_checked_like_one_read_from_a_file() -> None:
    from moot.providers.scripted import ScriptedToolCall, as_turn

    built = ScriptedTurn(tool_calls=[{"name": "finish", "arguments": {"result": "ok"}}])  # type: ignore[list-item]
    assert as_turn(built).tool_calls == [
        ScriptedToolCall(name="finish", arguments={"result": "ok"})
    ]
    # Hand-written YAML may give a count as "100" or 100.0; a fraction is still refused.
    assert as_turn({"usage": {"input_tokens": "100"}, "cost_usd": "0.5"}).usage == Usage(
        input_tokens=100
    )
    with pytest.raises(ValueError, match="Expected `int`"):
        as_turn({"usage": {"input_tokens": 100.5}})
