"""What the person's turn is doing now (`protocol.activity.TurnProgress`), the one rule the
app's working line and status line and the REPL's toolbar show: the phase, how long it and the
turn have lasted, and the tokens so far."""

from __future__ import annotations

from moot.protocol import events as ev
from moot.protocol.activity import TurnProgress, seconds
from moot.protocol.messages import Usage
from moot.protocol.states import RunState
from tui_scripts import Run


def test_each_phase_of_a_turn_is_named_with_its_time_and_tokens() -> None:
    run = Run()
    progress = TurnProgress()
    assert progress.line(0) == ""
    steps: list[tuple[ev.Event, float, str]] = [
        (run.start("go").events[-1], 10, "waiting for the model 0s"),
        (ev.ThinkingDelta(text="h" * 40, **run._ids()), 15, "thinking 0s · turn 5s · ~10 tok"),
        (ev.TextDelta(text="x" * 8, **run._ids()), 17, "writing 0s · turn 7s · ~12 tok"),
        (
            ev.UsageRecorded(model="m", usage=Usage(output_tokens=30), **run._ids()),
            18,
            "writing 1s · turn 8s · 30 tok",
        ),
        (
            ev.ToolStarted(tool_call_id="t1", tool="bash", arguments={}, **run._ids()),
            20,
            "running bash 0s · turn 10s · 30 tok",
        ),
        (
            ev.StateChanged(
                from_state=RunState.OBSERVATION_RECORDED,
                to_state=RunState.MODEL_PENDING,
                **run._ids(),
            ),
            95,
            "waiting for the model 0s · turn 1m 25s · 30 tok",
        ),
    ]
    for event, now, line in steps:
        progress.apply(event, now)
        assert progress.line(now) == line
    assert progress.line(100, tokens=False) == "waiting for the model 5s · turn 1m 30s"
    progress.apply(run.finish("done").events[-1], 101)
    assert progress.phase is None and progress.line(101) == ""


def test_an_unanswered_approval_outranks_what_else_goes_on() -> None:
    run = Run()
    progress = TurnProgress()
    progress.apply(run.start("go").events[-1], 0)
    progress.apply(run.ask("t1", "edit", {"path": "a"}, "diff").events[-1], 1)
    assert progress.phase == "waiting for your approval"
    # A peer streams meanwhile: the question still waits for the person.
    progress.streamed(False, 100, 2)
    assert progress.phase == "waiting for your approval"
    progress.apply(run.decided("t1").events[-1], 3)
    progress.apply(ev.ToolStarted(tool_call_id="t1", tool="edit", arguments={}, **run._ids()), 3)
    assert progress.phase == "running edit"


def test_a_peer_call_and_a_wait_for_a_message_are_named() -> None:
    run = Run()
    progress = TurnProgress()
    progress.apply(run.start("go").events[-1], 0)
    called = ev.AgentCalled(
        caller="moot", message="review", depth=1, **run._ids(call_id="c2", agent="reviewer")
    )
    progress.apply(called, 1)
    assert progress.phase == "moot called reviewer"
    progress.apply(ev.WaitingForMessage(tool_call_id="t9", **run._ids()), 2)
    assert progress.phase == "waiting for a message"


def test_nothing_shows_between_turns() -> None:
    progress = TurnProgress()
    assert not progress.streamed(True, 10, 0)
    run = Run()
    assert not progress.apply(
        ev.ToolStarted(tool_call_id="t", tool="bash", arguments={}, **run._ids()), 0
    )
    assert progress.phase is None


def test_seconds_read_as_a_person_reads_a_wait() -> None:
    assert [seconds(s) for s in (0, 4.9, 59, 60, 65, 3600)] == [
        "0s", "4s", "59s", "1m 00s", "1m 05s", "60m 00s"
    ]  # fmt: skip
