"""The app's performance shape on the fake client: answers stream coalesced and fold into one
widget, the mounted transcript stays bounded and pages history back in, the trace pane applies
events in batches, and an idle app runs no timer."""

from __future__ import annotations

import pytest

from moot.protocol import events as ev
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.messages import Streamed
from moot.tui.widgets.answer import AnswerBlock
from moot.tui.widgets.chat import ChatPane
from tui_apps import app_for
from tui_scripts import Run

ANSWER = "\n\n".join(f"Paragraph {i} with `code` and **bold** words." for i in range(40))


def one_answer(pieces: int) -> list[ev.Event]:
    run = Run().start("write a lot")
    run.text(ANSWER, pieces=pieces)
    return run.responded(ANSWER).finish(ANSWER).events


async def test_streamed_deltas_arrive_coalesced_and_a_finished_answer_is_one_static() -> None:
    from textual.widgets import Markdown, Static

    client = FakeClient(one_answer(pieces=300), autoplay=False)
    app = app_for(client)
    streamed: list[Streamed] = []
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.query_one(ChatPane)
        real = chat.take_stream

        async def counted(message: Streamed) -> None:
            streamed.append(message)
            await real(message)

        chat.take_stream = counted  # type: ignore[method-assign]
        deltas = sum(isinstance(e, ev.TextDelta) for e in client.script)
        client.play(1 + deltas)  # the turn and its deltas; the answer is still streaming
        await pilot.pause()
        assert app.view.bridge is not None
        app.view.bridge.flush()  # what its 1/30 s timer does
        await pilot.pause()
        answer = chat.query_one(AnswerBlock)
        assert len(answer.query(Markdown)) == 1  # streaming: a live Markdown
        assert 1 <= len(streamed) < deltas // 10  # 300 deltas, a handful of messages
        assert "".join(m.text for m in streamed) == ANSWER
        client.play()
        await pilot.pause()
        await pilot.pause()
        assert answer.finished
        assert len(answer.query(Markdown)) == 0  # the Markdown tree is gone
        assert [type(w) for w in answer.children] == [Static]  # one light widget
        assert len(list(answer.walk_children())) == 1


def long_session(turns: int) -> list[ev.Event]:
    events: list[ev.Event] = []
    for i in range(turns):
        run = Run(run_id=f"run_{i}").start(f"question {i}")
        events += run.text(f"answer {i}", pieces=1).responded(f"answer {i}").finish("").events
    return events


async def test_a_long_session_keeps_the_transcript_bounded_and_pages_history_back_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moot.tui.widgets import chat as chat_module
    from moot.tui.widgets.blocks import UserBlock

    # The marks scaled down (400 and 250 mounted blocks take minutes to play through here).
    HIGH_WATER, LOW_WATER = 60, 40
    monkeypatch.setattr(chat_module, "HIGH_WATER", HIGH_WATER)
    monkeypatch.setattr(chat_module, "LOW_WATER", LOW_WATER)
    monkeypatch.setattr(chat_module, "PAGE", 30)
    turns = 60  # 3 blocks a turn: 180 blocks were it unbounded
    client = FakeClient(long_session(turns), autoplay=False)
    reads: list[dict[str, object]] = []
    real_events = client.query.events

    def events(session_id: str, **kw: object) -> list[ev.Event]:
        reads.append(kw)
        return real_events(session_id, **kw)  # type: ignore[arg-type]

    client.query.events = events  # type: ignore[method-assign]
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(0, len(client.script), 20):  # live, a few turns at a time
            client.play(20)
            await pilot.pause()
        await pilot.pause()
        chat = app.query_one(ChatPane)
        shown = [str(b.content) for b in chat.query(UserBlock)]
        assert len(chat.children) <= HIGH_WATER + 1  # (+1: the "load earlier" line)
        assert shown[-1] == f"question {turns - 1}"
        assert "question 0" not in shown and chat.more_before
        first_shown = int(shown[0].split()[1])

        await pilot.press("ctrl+home")
        await pilot.pause()
        for worker in [w for w in app.workers if w.group == "history"]:
            await worker.wait()
        await pilot.pause()
        again = [str(b.content) for b in chat.query(UserBlock)]
        assert int(again[0].split()[1]) < first_shown  # older turns paged back in
        assert again[-1] == f"question {turns - 1}"
        assert reads and reads[-1]["before_seq"]  # read through the client's queries
        assert len(chat.children) > LOW_WATER


def running_timers(app: MootApp) -> list[object]:
    """Timers that would still fire: not stopped, not done, not paused."""
    nodes = [app, *app.screen_stack, *app.query("*")]
    found = []
    for node in nodes:
        for timer in list(node._timers):
            task = getattr(timer, "_task", None)
            if task is not None and not task.done() and timer._active.is_set():
                found.append(timer)
    return found


async def test_the_trace_pane_applies_events_in_batches_and_collapses_finished_turns() -> None:
    from moot.tui.widgets.trace import TracePane

    client = FakeClient(long_session(50), autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        trace = app.query_one(TracePane)
        for event in client.play():  # 200 events at once, not through the bridge
            trace.take(event)
        # The first applied at once (nothing was applied for a while), the rest queued for
        # one timer.
        assert trace.updates == 1 and trace._timer is not None
        trace.apply_pending()  # what the timer does
        assert trace.updates == 2 and trace._timer is None
        turns = trace.root.children
        assert len(turns) == 50
        assert not any(turn.is_expanded for turn in turns)  # every turn finished: collapsed
        await pilot.pause()


async def test_the_trace_pane_shows_an_event_after_a_quiet_spell_at_once_and_batches_the_rest() -> (
    None
):
    from moot.tui.widgets.trace import UPDATES_PER_S, TracePane

    now = [1000.0]
    app = app_for(FakeClient(autoplay=False), clock=lambda: now[0])
    events = [e for e in long_session(3) if e.kind in ("turn_started", "turn_finished")]
    async with app.run_test(size=(160, 48)):
        trace = app.query_one(TracePane)
        trace.take(events[0])
        assert trace.updates == 1 and trace._timer is None  # at once: nothing to wait for
        now[0] += 0.5 / UPDATES_PER_S
        trace.take(events[1])
        trace.take(events[2])
        assert trace.updates == 1 and trace._timer is not None  # within the interval: batched
        trace.apply_pending()  # what the timer does
        assert trace.updates == 2 and trace._timer is None  # both in one batch
        now[0] += 2 / UPDATES_PER_S
        trace.take(events[3])
        assert trace.updates == 3  # a quiet spell again: at once


async def test_an_idle_app_runs_no_timer_and_the_cursor_stops_blinking() -> None:
    from moot.tui.widgets.prompt import PromptInput

    client = FakeClient(long_session(3), autoplay=False)
    app = app_for(client)
    async with app.run_test(size=(160, 48)) as pilot:
        client.play()
        await pilot.pause()
        assert app.view.bridge is not None
        app.view.bridge.flush()
        app.trace.apply_pending()
        await pilot.pause()
        assert running_timers(app) == []
        prompt = app.query_one(PromptInput)
        prompt._blinks = True  # as in a terminal (a headless app never blinks)
        await pilot.press("x")
        assert prompt.cursor_blink and running_timers(app)  # typing: it blinks
        prompt.stop_blinking()  # what BLINK_IDLE_S after the last key does
        await pilot.pause()
        assert not prompt.cursor_blink and running_timers(app) == []


async def test_a_long_answer_folds_its_paragraphs_as_it_streams_and_ends_as_one_static() -> None:
    from textual.widgets import Markdown, Static

    from moot.tui.widgets.answer import FREEZE_CHARS

    long = "\n\n".join(f"Paragraph {i}: " + "word " * 20 for i in range(200))  # ~23,000 chars
    run = Run().start("write more")
    client = FakeClient(
        run.text(long, pieces=100).responded(long).finish(long).events, autoplay=False
    )
    app = app_for(client)
    async with app.run_test(size=(120, 40)) as pilot:
        client.play(101)  # the turn and its deltas
        await pilot.pause()
        assert app.view.bridge is not None
        app.view.bridge.flush()
        await pilot.pause()
        answer = app.query_one(AnswerBlock)
        live = answer.query_one(Markdown)
        assert len(live.source) <= FREEZE_CHARS + len(long) // 100  # only the tail is live
        assert len(answer.query("Static.part")) >= 1
        client.play()
        await pilot.pause()
        await pilot.pause()
        assert [type(w) for w in answer.children] == [Static]
        assert answer.text == long


@pytest.mark.parametrize(("environ", "fps"), [({}, "120"), ({"TEXTUAL_FPS": "30"}, "30")])
def test_the_app_paints_at_frames_per_s_unless_textual_fps_says_otherwise(
    environ: dict[str, str], fps: str
) -> None:
    """Textual reads `TEXTUAL_FPS` once, as its constants load, so a fresh process shows what
    loading the app sets; the variable the app sets itself never reaches what moot runs."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"} | environ
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, moot.tui, textual.constants as c;"
            "print(c.MAX_FPS, os.environ.get('TEXTUAL_FPS', '-'))",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert shown == [fps, environ.get("TEXTUAL_FPS", "-")]
