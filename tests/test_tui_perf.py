"""The app's performance shape on the fake client: answers stream coalesced and fold into one
widget, the mounted transcript stays bounded and pages history back in, the trace pane applies
events in batches, and an idle app runs no timer."""

from __future__ import annotations

from moot.protocol import events as ev
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.messages import Streamed
from moot.tui.widgets.answer import AnswerBlock
from moot.tui.widgets.chat import ChatPane
from tui_scripts import Run

ANSWER = "\n\n".join(f"Paragraph {i} with `code` and **bold** words." for i in range(40))


def app_for(client: FakeClient, **kw: object) -> MootApp:
    from moot.history import PromptHistory

    return MootApp(client, history=PromptHistory(None), **kw)  # type: ignore[arg-type]


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
        assert app._bridge is not None
        app._bridge.flush()  # what its 1/30 s timer does
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
