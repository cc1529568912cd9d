"""The client surface every front end holds: submit, subscribe from any seq, queries; the
submission ids that tell a front end which events answer its op; back-pressure; approvals keyed
by (agent call, tool call)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.approval import ApprovalRequest, Verdict
from moot.protocol.messages import Usage
from moot.protocol.states import StopReason
from moot.protocol.subscription import HIGH_WATER, Subscription
from moot.providers.base import Finish, ModelRequest, TextPart, ThinkingPart, UsageReport
from moot.providers.scripted import FunctionProvider, ScriptedProvider
from moot.store.memory import MemoryStore
from moot.store.sqlite import SQLiteStore
from moot.testing import drive_turn
from moot.testing.drive import approve, deny
from moot.tools.base import SideEffect, tool
from runtime_helpers import agent, call, make_runtime, of


class Streamer:
    """A provider that streams `pieces` thinking deltas then as many text ones, handing the
    event loop back after each, as a real network stream does."""

    name = "test/streamer"

    def __init__(self, pieces: int, text: str = "tok ") -> None:
        self.pieces, self.text = pieces, text

    async def stream(self, request: ModelRequest) -> AsyncIterator[object]:
        for _ in range(self.pieces):
            yield ThinkingPart("hm ")
            await asyncio.sleep(0)
        for _ in range(self.pieces):
            yield TextPart(self.text)
            await asyncio.sleep(0)
        yield UsageReport(Usage(input_tokens=1, output_tokens=self.pieces), None)
        yield Finish("end_turn")


def streaming_runtime(pieces: int, store: object | None = None) -> Runtime:
    return Runtime(
        [Agent("main", model=Streamer(pieces))],  # type: ignore[arg-type]
        store=store or MemoryStore(),  # type: ignore[arg-type]
    )


# ---- subscribe from a seq ------------------------------------------------------------------------


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
async def test_a_subscription_from_a_seq_replays_then_goes_live_with_no_gap_or_duplicate(
    store_kind: str, tmp_path: Path
) -> None:
    store = MemoryStore() if store_kind == "memory" else SQLiteStore(tmp_path / "s.db")
    runtime = streaming_runtime(200, store)
    watcher = runtime.subscribe()
    runtime.submit(ops.UserTurn(text="stream"))
    async for event in watcher:  # let the run get well under way
        if event.seq >= 60:
            break
    late = runtime.subscribe(after_seq=25)  # the run is still streaming
    got = []
    async for event in late:
        got.append(event)
        if isinstance(event, ev.TurnFinished):
            break
    stored = store.events(runtime.session_id, after_seq=25)  # type: ignore[attr-defined]
    assert [e.seq for e in got] == [e.seq for e in stored] == list(range(26, stored[-1].seq + 1))
    assert got == stored
    assert late.merged == 0


async def test_a_subscription_without_a_seq_starts_now() -> None:
    runtime = make_runtime(agent("main", "one", "two"))
    await drive_turn(runtime, "first")
    live = runtime.subscribe()
    outcome = await drive_turn(runtime, "second")
    runtime.submit(ops.Shutdown())
    assert [e async for e in live] == outcome.events  # nothing of the first turn


async def test_a_replay_of_a_finished_session_ends_where_the_log_does_and_then_waits() -> None:
    runtime = make_runtime(agent("main", "one"))
    outcome = await drive_turn(runtime, "first")
    replay = runtime.subscribe(after_seq=0)
    assert replay.pending == len(outcome.events)
    runtime.submit(ops.Shutdown())
    assert [e async for e in replay] == outcome.events


# ---- back-pressure -------------------------------------------------------------------------------


async def test_a_slow_subscriber_gets_deltas_merged_and_never_holds_the_run_back() -> None:
    pieces = 5_000
    runtime = streaming_runtime(pieces)
    slow = runtime.subscribe()
    outcome = await drive_turn(runtime, "stream")  # a subscriber that keeps up, alongside
    assert not runtime.running  # the run finished while `slow` took nothing

    # The slow one's queue stayed bounded: at most the high-water mark plus what cannot merge.
    others = [e for e in outcome.events if not isinstance(e, ev.TextDelta | ev.ThinkingDelta)]
    assert slow.pending <= HIGH_WATER + len(others) + 1
    assert slow.merged > 0
    runtime.submit(ops.Shutdown())
    got = [e async for e in slow]

    # Nothing else was dropped, merged or reordered ...
    assert [e for e in got if not isinstance(e, ev.TextDelta | ev.ThinkingDelta)] == others
    # ... and the merged deltas hold all the text, in order, ending at the last delta's seq.
    for kind, piece in ((ev.TextDelta, "tok "), (ev.ThinkingDelta, "hm ")):
        assert "".join(e.text for e in got if isinstance(e, kind)) == piece * pieces
    seqs = [e.seq for e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert got[-1] == outcome.finished


def test_deltas_merge_only_past_the_high_water_mark_and_only_with_their_own_kind() -> None:
    subscription = Subscription(high_water=2)
    text = [ev.TextDelta(seq=n, call_id="c1", text=str(n)) for n in range(1, 6)]
    for event in text[:2]:
        subscription.put(event)
    subscription.put(ev.ThinkingDelta(seq=3, call_id="c1", text="t"))  # a different kind
    subscription.put(ev.TextDelta(seq=4, call_id="c1", text="4"))
    subscription.put(ev.TextDelta(seq=5, call_id="c1", text="5"))  # merges into seq 4
    subscription.put(ev.TextDelta(seq=6, call_id="c2", text="6"))  # another call: its own
    subscription.end()

    async def take() -> list[ev.Event]:
        return [e async for e in subscription]

    got = asyncio.run(take())
    assert [(e.kind, e.seq, e.text) for e in got] == [  # type: ignore[attr-defined]
        ("text_delta", 1, "1"),
        ("text_delta", 2, "2"),
        ("thinking_delta", 3, "t"),
        ("text_delta", 5, "45"),
        ("text_delta", 6, "6"),
    ]


# ---- submission ids ------------------------------------------------------------------------------


@tool(side_effect=SideEffect.WRITES_WORKSPACE)
def touch(path: str) -> str:
    """Pretend to create a file."""
    return f"created {path}"


@tool(side_effect=SideEffect.RUNS_COMMANDS)
async def hang() -> str:
    """Wait until cancelled."""
    await asyncio.Event().wait()
    return "never"


class AskForWrites:
    default_mode = "default"

    def decide(self, request: ApprovalRequest) -> Verdict:
        if request.side_effect is SideEffect.READ_ONLY or request.tool == "finish":
            return Verdict("allow")
        return Verdict("ask", reason="writes", preview=str(request.arguments))


async def test_every_event_carries_the_submission_it_answers() -> None:
    main = agent(
        "main", {"tool_calls": [call("touch", path="a")]}, "done", {"tool_calls": [call("hang")]}
    )
    runtime = make_runtime(main, tools=[touch, hang], approval=AskForWrites())
    watch = runtime.subscribe()
    outcome = await asyncio.wait_for(drive_turn(runtime, "go", answer=approve), timeout=10)
    (decided,) = outcome.of(ev.ApprovalDecided)
    approve_id = decided.submission_id
    assert approve_id not in ("", outcome.submission_id)
    assert {e.submission_id for e in outcome.events if e is not decided} == {outcome.submission_id}

    mode_id = runtime.submit(ops.SetMode(mode="acceptEdits"))
    interrupted = await asyncio.wait_for(
        drive_turn(
            runtime,
            "again",
            answer=approve,
            react=lambda e: ops.Interrupt() if e.kind == "tool_started" else None,
        ),
        timeout=10,
    )
    runtime.submit(ops.Shutdown())
    everything = [e async for e in watch]
    (changed,) = of(everything, ev.ModeChanged)
    assert changed.submission_id == mode_id
    # What the interrupt ended answers the interrupt: the tool's result and the turn's end.
    ended = [
        e
        for e in interrupted.events
        if e.submission_id != interrupted.submission_id and not isinstance(e, ev.ApprovalDecided)
    ]
    assert [e.kind for e in ended] == ["tool_finished", "turn_finished"]
    assert ended[0].submission_id == ended[1].submission_id != ""


# ---- approvals keyed by (agent call, tool call) -------------------------------------------


def peers_reusing_a_tool_call_id() -> Runtime:
    """Two peers, called at once, each asking to run `touch` under the same tool call id."""
    lead = agent(
        "lead",
        {
            "tool_calls": [
                call("call_agent", agent_name="a", message="make a"),
                call("call_agent", agent_name="b", message="make b"),
            ]
        },
        "both done",
    )
    same = {"tool_calls": [{"name": "touch", "arguments": {"path": "x"}, "id": "t1"}]}
    peers = [lead, agent("a", same, "a done"), agent("b", same, "b done")]
    return make_runtime(peers, tools=[touch], approval=AskForWrites())


async def test_two_peers_waiting_on_the_same_tool_call_id_are_each_answered() -> None:
    """Fails on the old code: waiters keyed by tool call id alone, the second overwrote the
    first, and its Approve was dropped, so the run hung."""
    runtime = peers_reusing_a_tool_call_id()
    outcome = await asyncio.wait_for(drive_turn(runtime, "go", answer=approve), timeout=10)
    asked = outcome.of(ev.ApprovalRequested)
    assert {(e.call_id, e.tool_call_id) for e in asked} == {
        (asked[0].call_id, "t1"),
        (asked[1].call_id, "t1"),
    }
    assert asked[0].call_id != asked[1].call_id
    decided = outcome.of(ev.ApprovalDecided)
    assert sorted(e.call_id for e in decided) == sorted(e.call_id for e in asked)
    assert all(e.approved for e in decided)
    assert outcome.finished.output == "both done"


async def test_an_answer_that_matches_nothing_or_is_ambiguous_is_refused_with_an_event() -> None:
    runtime = peers_reusing_a_tool_call_id()
    refused: list[ev.OpRefused] = []
    pending: list[ev.ApprovalRequested] = []

    def react(event: ev.Event) -> ops.Op | None:
        if isinstance(event, ev.OpRefused):
            refused.append(event)
        if isinstance(event, ev.ApprovalRequested):
            pending.append(event)
            if len(pending) == 2:
                # Both wait on "t1": without the agent call, the answer cannot tell which.
                runtime.submit(ops.Approve(tool_call_id="t1"))
                runtime.submit(ops.Deny(tool_call_id="t9", call_id=event.call_id))
                runtime.submit(deny(pending[0], "not that one"))
                return approve(pending[1])
        return None

    outcome = await asyncio.wait_for(drive_turn(runtime, "go", react=react), timeout=10)
    assert [(e.op, e.reason.split(" (")[0]) for e in refused] == [
        ("approve", "tool call 't1' waits in several agent calls"),
        ("deny", f"no approval waits for tool call 't9' in agent call {pending[1].call_id!r}"),
    ]
    assert all(e.run_id == "" and e.submission_id for e in refused)
    decided = {e.call_id: e.approved for e in outcome.of(ev.ApprovalDecided)}
    assert decided == {pending[0].call_id: False, pending[1].call_id: True}


async def test_set_mode_on_a_session_without_modes_is_refused_with_an_event() -> None:
    runtime = make_runtime(agent("main", "hi"))
    watch = runtime.subscribe()
    submission = runtime.submit(ops.SetMode(mode="plan"))
    runtime.submit(ops.Shutdown())
    (refused,) = [e async for e in watch]
    assert isinstance(refused, ev.OpRefused)
    assert (refused.op, refused.submission_id) == ("set_mode", submission)
    assert runtime.mode is None


async def test_an_op_the_session_cannot_take_now_is_refused_with_an_event_never_raised() -> None:
    """Busy is an answer: a second turn before the first has even recorded `turn_started`
    (two Enters in a row), a resume with nothing to resume and an interrupt with nothing
    running are each answered by `op_refused` with their submission id. Fails on the old code:
    the second turn raised `RuntimeBusy` across the contract (the app's worker closed the app),
    the resume raised too, and the idle interrupt was answered by silence."""
    runtime = make_runtime(agent("main", {"tool_calls": [call("hang")]}), tools=[hang])
    watch = runtime.subscribe()
    idle = runtime.submit(ops.Interrupt())
    nothing = runtime.submit(ops.ResumeRun())
    first = runtime.submit(ops.UserTurn(text="one"))
    second = runtime.submit(ops.UserTurn(text="two"))  # before the first turn's first step
    again = runtime.submit(ops.ResumeRun())
    events: list[ev.Event] = []
    async for event in watch:
        events.append(event)
        if isinstance(event, ev.ToolStarted):
            stop = runtime.submit(ops.Interrupt())
        if isinstance(event, ev.TurnFinished):
            break
    late = runtime.submit(ops.Interrupt())
    runtime.submit(ops.Shutdown())
    events += [e async for e in watch]

    refused = {e.submission_id: (e.op, e.reason) for e in of(events, ev.OpRefused)}
    assert refused == {
        idle: ("interrupt", "nothing is running to interrupt"),
        nothing: ("resume_run", f"session {runtime.session_id} has no unfinished turn to resume"),
        second: ("user_turn", "a turn is running: wait for it to end, or interrupt it"),
        again: ("resume_run", "a turn is running: wait for it to end, or interrupt it"),
        late: ("interrupt", "nothing is running to interrupt"),
    }
    (started,) = of(events, ev.TurnStarted)
    assert (started.prompt, started.submission_id) == ("one", first)
    (finished,) = of(events, ev.TurnFinished)
    assert (finished.stop_reason, finished.submission_id) == (StopReason.USER_CANCELLED, stop)


async def test_an_interrupt_whose_turn_ended_before_it_landed_is_refused_never_silent() -> None:
    """An `Interrupt` lands after the work's first step; a turn that ended within that step
    leaves it nothing to stop, and that is its answer (`op_refused`), with its submission id."""
    runtime = make_runtime(agent("main", "done at once"))
    watch = runtime.subscribe()
    turn = runtime.submit(ops.UserTurn(text="go"))
    stop = runtime.submit(ops.Interrupt())  # while the turn is under way, before its first step
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())
    events = [e async for e in watch]

    assert finished is not None
    assert (finished.stop_reason, finished.submission_id) == (StopReason.COMPLETED, turn)
    answers = [(e.kind, getattr(e, "reason", "")) for e in events if e.submission_id == stop]
    assert answers == [("op_refused", "nothing is running to interrupt: it had ended")]


class SummaryHangs(ScriptedProvider):
    """A scripted model whose summaries never come (a compaction waits until interrupted)."""

    async def stream(self, request: ModelRequest):  # type: ignore[override]
        if request.purpose == "compact":
            await asyncio.Event().wait()
        async for delta in super().stream(request):
            yield delta


async def test_an_interrupt_during_a_compaction_ends_it_and_is_answered() -> None:
    """Fails on the old code: the interrupt of a compaction between turns raised an
    `AssertionError` across the contract (it looked for a run)."""
    runtime = Runtime([Agent("main", model=SummaryHangs(["x " * 20_000]))], store=MemoryStore())
    await drive_turn(runtime, "a long answer, please")
    watch = runtime.subscribe()
    compact = runtime.submit(ops.Compact())
    turn = runtime.submit(ops.UserTurn(text="not while compacting"))
    stop = runtime.submit(ops.Interrupt())
    await runtime.wait()
    runtime.submit(ops.Shutdown())
    refused = [(e.op, e.reason, e.submission_id) for e in [e async for e in watch]]
    assert compact != stop
    assert refused == [
        (
            "user_turn",
            "the conversation is being compacted: wait for it, or interrupt it",
            turn,
        ),
        ("compact", "interrupted: nothing was compacted", stop),
    ]
    assert runtime.store.events(runtime.session_id, kinds=("history_compacted",)) == []


# ---- every op is answered by events carrying its submission id ------------------------------


async def test_a_cancel_agent_is_answered_by_the_end_of_the_subtree_it_cancels() -> None:
    """Fails on the old code: the cancelled subtree's ends carried the turn's submission id,
    so nothing answered the `CancelAgent` (a front end waiting for its answer waited forever)."""
    started = asyncio.Event()

    @tool(side_effect=SideEffect.RUNS_COMMANDS)
    async def long_job() -> str:
        """Runs until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    def main_model(request: ModelRequest) -> object:
        if len(request.messages) > 1:
            return "main goes on"
        return {"tool_calls": [call("call_agent", agent_name="worker", message="work")]}

    runtime = make_runtime(
        [
            Agent("main", model=FunctionProvider(main_model)),
            agent("worker", {"tool_calls": [call("call_agent", agent_name="helper", message="x")]}),
            agent("helper", {"tool_calls": [call("long_job")]}),
        ],
        tools=[long_job],
    )
    turn = runtime.submit(ops.UserTurn(text="go"))
    await started.wait()
    called = {
        e.agent: e.call_id for e in of(runtime.store.events(runtime.session_id), ev.AgentCalled)
    }
    cancel = runtime.submit(ops.CancelAgent(task_id=called["worker"]))
    finished = await runtime.wait()
    runtime.submit(ops.Shutdown())

    assert finished is not None and finished.output == "main goes on"
    answers = [e for e in runtime.store.events(runtime.session_id) if e.submission_id == cancel]
    assert [(e.kind, e.agent) for e in answers] == [
        ("tool_finished", "helper"),
        ("agent_returned", "helper"),
        ("tool_finished", "worker"),
        ("agent_returned", "worker"),
    ]
    assert all(e.stop_reason is StopReason.USER_CANCELLED for e in of(answers, ev.AgentReturned))
    assert finished.submission_id == turn  # the caller's own events still answer the turn


async def test_an_interrupt_of_the_persons_own_tool_call_is_answered() -> None:
    """Fails on the old code: the person's `tool_ran` answered their `RunTool`, and nothing
    carried the `Interrupt`'s submission id."""
    started = asyncio.Event()

    @tool(side_effect=SideEffect.RUNS_COMMANDS)
    async def long_job() -> str:
        """Runs until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    runtime = make_runtime(agent("main", "hi"), tools=[long_job])
    watch = runtime.subscribe()
    run = runtime.submit(ops.RunTool(tool="long_job"))
    await started.wait()
    stop = runtime.submit(ops.Interrupt())
    await runtime.tools_done()
    runtime.submit(ops.Shutdown())
    events = [e async for e in watch]

    (interrupted,) = [e for e in events if e.submission_id == stop]
    assert isinstance(interrupted, ev.RunToolsInterrupted)
    assert (interrupted.tools, interrupted.submissions) == (("long_job",), (run,))
    (ran,) = of(events, ev.ToolRan)
    assert (ran.submission_id, ran.interrupted) == (run, True)


async def test_an_interrupt_landing_as_the_persons_tool_call_ends_is_refused_never_silent() -> None:
    """The person's tool call has ended (its `tool_ran` is stored) but its task is not yet
    forgotten: the interrupt stops nothing, and says so. Fails on the old code: silence."""

    @tool(side_effect=SideEffect.READ_ONLY)
    async def quick() -> str:
        """Answers at once."""
        return "done"

    runtime = make_runtime(agent("main", "hi"), tools=[quick])
    watch = runtime.subscribe()
    run = runtime.submit(ops.RunTool(tool="quick"))
    await asyncio.sleep(0)  # the call runs to its end; its task is forgotten a step later
    stop = runtime.submit(ops.Interrupt())
    await runtime.tools_done()
    runtime.submit(ops.Shutdown())
    events = [e async for e in watch]

    (ran,) = of(events, ev.ToolRan)
    assert (ran.submission_id, ran.interrupted) == (run, False)
    answers = [(e.kind, getattr(e, "reason", "")) for e in events if e.submission_id == stop]
    assert answers == [("op_refused", "nothing is running to interrupt: it had ended")]


async def test_a_switch_to_the_mode_or_model_the_session_has_is_refused_never_silent() -> None:
    """Fails on the old code: both were answered by silence (a front end waiting for the
    answer waited forever)."""
    runtime = make_runtime(agent("main", "hi"), approval=AskForWrites())
    watch = runtime.subscribe()
    mode = runtime.submit(ops.SetMode(mode="default"))
    model = runtime.submit(ops.SetModel(model="scripted"))
    runtime.submit(ops.Shutdown())
    refused = {
        e.submission_id: (e.op, e.reason) for e in of([e async for e in watch], ev.OpRefused)
    }
    assert refused == {
        mode: ("set_mode", "the session is in default mode already"),
        model: ("set_model", "main answers with scripted already"),
    }


# ---- state per session, never per process -----------------------------------------------------


async def test_two_runtimes_in_one_process_keep_their_own_mode_approvals_and_runs(
    tmp_path: Path,
) -> None:
    """Two sessions share one process, one store and one rules policy: each keeps its own
    mode, its own "for this session" approvals and its own run; their turns overlap."""
    from moot.permissions.policy import RulesPolicy
    from moot.permissions.rules import RuleSet

    store = SQLiteStore(tmp_path / "shared.db")
    policy = RulesPolicy(RuleSet(), tmp_path)
    twice = {"tool_calls": [call("touch", path="a")]}
    options = RuntimeOptions(tools=[touch], approval=policy)
    first = Runtime([agent("main", twice, "one", twice, "two")], store=store, options=options)
    second = Runtime([agent("main", twice, "one", twice, "two")], store=store, options=options)
    first.submit(ops.SetMode(mode="plan"))

    def for_session(event: ev.ApprovalRequested) -> ops.Op:
        return approve(event, scope="session")  # keeps the request's suggested rule

    planned, asked = await asyncio.wait_for(
        asyncio.gather(drive_turn(first, "go"), drive_turn(second, "go", answer=for_session)),
        timeout=10,
    )
    assert (first.mode, second.mode) == ("plan", "default")
    (refused,) = planned.of(ev.ApprovalDecided)
    assert not refused.approved and refused.by == "policy"  # plan mode refuses the write
    kept = asked.of(ev.ApprovalDecided)[0].rule
    assert kept
    # The second session's approval stays with it: its next write runs, the first's still not.
    again_second = await asyncio.wait_for(drive_turn(second, "again"), timeout=10)
    assert not again_second.of(ev.ApprovalRequested)
    first.submit(ops.SetMode(mode="default"))
    again_first = await asyncio.wait_for(drive_turn(first, "again", answer=deny), timeout=10)
    assert again_first.of(ev.ApprovalRequested)
    assert {e.session_id for e in planned.events} == {first.session_id}
    assert {e.session_id for e in asked.events} == {second.session_id}
    store.close()
