"""An MCP server's question in the app (issue 33): a screen with the message and a field for
each value the schema asks, taking the focus only after a pause; Accept checks the values and
sends them, Decline and Cancel (Esc) send none; a question answered elsewhere closes."""

from __future__ import annotations

from textual.widgets import Button, Input

from clocks import Clock
from moot.protocol import events as ev
from moot.protocol import ops
from moot.testing import FakeClient
from moot.tui.screens.mcp_question import McpQuestionScreen
from moot.tui.widgets.approval import GRACE_S
from tui_apps import app_for

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "guests": {"type": "integer", "title": "Guests"},
        "window": {"type": "boolean", "title": "Window seat"},
        "meal": {"type": "string", "title": "Meal", "enum": ["fish", "veg"], "default": "veg"},
    },
    "required": ["name", "guests"],
}
QUESTION = ev.McpQuestionAsked(
    ask_id="ask_1", server="bistro", message="Booking a table: who and how many?", schema=SCHEMA
)


async def asked(pilot) -> McpQuestionScreen:  # type: ignore[no-untyped-def]
    """The question's screen once it shows and its first field has the focus (bounded)."""
    for _ in range(400):
        screen = pilot.app.screen
        if isinstance(screen, McpQuestionScreen) and screen.focused is not None:
            return screen
        await pilot.pause(0.01)
    raise AssertionError(f"no question focused; the screen is {pilot.app.screen}")


def fill(screen: McpQuestionScreen, *values: str) -> None:
    for index, value in enumerate(values):
        screen.query_one(f"#field-{index}", Input).value = value


async def closed(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(200):  # bounded
        if not isinstance(pilot.app.screen, McpQuestionScreen):
            return
        await pilot.pause(0.01)
    screen = pilot.app.screen
    problem = str(screen.query_one(".problem").render())
    raise AssertionError(f"the question's screen stayed: {problem!r}, focus {screen.focused}")


async def test_the_fields_are_filled_checked_and_sent() -> None:
    client = FakeClient([])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        client.emit(QUESTION)
        screen = await asked(pilot)
        texts = [str(s.render()) for s in screen.query("Static")]
        assert any("MCP server bistro asks" in t for t in texts)
        assert any("Guests (integer, required)" in t for t in texts)
        fill(screen, "Ada", "many", "yes")
        await pilot.click("#accept")
        await pilot.pause()
        problem = str(screen.query_one(".problem").render())
        assert problem == "Guests wants a whole number"
        assert not [op for op in client.ops if isinstance(op, ops.AnswerMcpQuestion)]
        fill(screen, "Ada", "3", "yes")
        accept = screen.query_one("#accept", Button)
        for _ in range(100):  # bounded: a button takes no click while its last one shows
            if not accept.has_class("-active"):
                break
            await pilot.pause(0.01)
        await pilot.click("#accept")
        await closed(pilot)

    content = {"name": "Ada", "guests": 3, "window": True, "meal": "veg"}
    assert [op for op in client.ops if isinstance(op, ops.AnswerMcpQuestion)] == [
        ops.AnswerMcpQuestion(ask_id="ask_1", action="accept", content=content)
    ]


async def test_decline_and_escape_send_no_content() -> None:
    client = FakeClient([])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        client.emit(QUESTION)
        await asked(pilot)
        await pilot.click("#decline")
        await pilot.pause()
        client.emit(ev.McpQuestionAsked(ask_id="ask_2", server="bistro", message="?", schema={}))
        await asked(pilot)
        await pilot.press("escape")
        await pilot.pause()
    assert [op for op in client.ops if isinstance(op, ops.AnswerMcpQuestion)] == [
        ops.AnswerMcpQuestion(ask_id="ask_1", action="decline"),
        ops.AnswerMcpQuestion(ask_id="ask_2", action="cancel"),
    ]


async def test_keys_typed_as_the_question_comes_do_not_fill_it_in() -> None:
    clock = Clock()  # still: every key counts as typed on, however the machine delivers it
    client = FakeClient([])
    async with app_for(client, clock=clock).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        client.emit(QUESTION)
        for _ in range(200):  # bounded: the event reaches the app through a worker
            if isinstance(pilot.app.screen, McpQuestionScreen):
                break
            await pilot.pause(0.01)
        await pilot.pause()
        assert pilot.app.screen.focused is None  # Textual's own auto focus is off
        await pilot.press(*"hello", "enter")  # the person was typing a message
        assert pilot.app.screen.focused is None
        clock.advance(GRACE_S + 1)  # then paused
        screen = await asked(pilot)
        assert screen.query_one("#field-0").value == ""  # type: ignore[attr-defined]
        assert not [op for op in client.ops if isinstance(op, ops.AnswerMcpQuestion)]


async def test_a_question_answered_elsewhere_closes() -> None:
    client = FakeClient([])
    async with app_for(client).run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        client.emit(QUESTION)
        await asked(pilot)
        client.emit(
            ev.McpQuestionAnswered(ask_id="ask_1", server="bistro", action="cancel", by="session")
        )
        await closed(pilot)
    assert client.ops == [] or not [o for o in client.ops if isinstance(o, ops.AnswerMcpQuestion)]
