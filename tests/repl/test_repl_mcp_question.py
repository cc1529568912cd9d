"""An MCP server's question at the REPL's prompt (issue 33): the message and the fields, one key
(answer, decline, cancel) after a pause, then a line per field, checked as the schema says (a
value that does not fit is asked again); the op sent answers the question."""

from __future__ import annotations

import pytest

from moot.protocol import events as ev
from moot.protocol import ops
from moot.repl.question import GRACE_S
from moot.testing import FakeClient
from repl_harness import running_repl

ENTER = "\r"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Whose table"},
        "guests": {"type": "integer", "title": "Guests"},
        "meal": {"type": "string", "title": "Meal", "enum": ["fish", "veg"], "default": "veg"},
    },
    "required": ["name", "guests"],
}
QUESTION = ev.McpQuestionAsked(
    ask_id="ask_1", server="bistro", message="Booking a table: who and how many?", schema=SCHEMA
)


async def test_the_fields_are_asked_one_by_one_and_the_answer_sent() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.client.emit(QUESTION)
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        assert "MCP server bistro asks:" in repl.text and "Booking a table" in repl.text
        assert "Guests (integer, required)" in repl.text
        assert "Meal (one of fish, veg)" in repl.text
        repl.clock.advance(GRACE_S + 0.1)
        repl.type("a")
        for field, typed in (("Name", "Ada"), ("Guests", "many"), ("Guests", "3"), ("Meal", "")):
            await repl.until(lambda f=field: (repl.repl.asking or "").startswith(f), field)
            repl.type(typed + ENTER)
            if typed == "many":
                await repl.printed("(Guests wants a whole number)")
        await repl.until(lambda: repl.ops(ops.AnswerMcpQuestion), "the answer")

    content = {"name": "Ada", "guests": 3, "meal": "veg"}
    assert repl.ops(ops.AnswerMcpQuestion) == [
        ops.AnswerMcpQuestion(ask_id="ask_1", action="accept", content=content)
    ]


@pytest.mark.parametrize(("key", "action"), [("d", "decline"), ("c", "cancel")])
async def test_a_question_declined_or_cancelled_sends_no_content(key: str, action: str) -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.client.emit(QUESTION)
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.clock.advance(GRACE_S + 0.1)
        repl.type(key)
        await repl.until(lambda: repl.ops(ops.AnswerMcpQuestion), "the answer")

    assert repl.ops(ops.AnswerMcpQuestion) == [
        ops.AnswerMcpQuestion(ask_id="ask_1", action=action)  # type: ignore[arg-type]
    ]


async def test_a_question_answered_elsewhere_is_not_asked_on() -> None:
    async with running_repl(FakeClient([])) as repl:
        await repl.prompt_ready()
        repl.client.emit(QUESTION)
        await repl.until(lambda: repl.repl.approvals.asking, "the question asked")
        repl.client.emit(
            ev.McpQuestionAnswered(ask_id="ask_1", server="bistro", action="cancel", by="session")
        )
        await repl.printed("(settled)")
        assert not repl.repl.approvals.waiting
