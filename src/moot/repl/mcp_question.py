"""An MCP server's question at the prompt (`mcp_question_asked`): the message, the fields it
wants, one key (answer, decline, cancel, typed after a pause as for an approval), then a line
for each field, checked as the schema says (`moot.frontend.mcp_form`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from moot.frontend.mcp_form import Field, field_value, form_fields
from moot.protocol import events as ev
from moot.protocol import ops
from moot.repl.paint import strip_escapes
from moot.repl.transcript import Transcript

CHOICES = (("a", "answer"), ("d", "decline"), ("c", "cancel"))
TRIES = 3
"""How often a field is asked again after a value that does not fit, before the question is
cancelled."""

Line = Callable[[str], Awaitable[str]]


def show_question(transcript: Transcript, question: ev.McpQuestionAsked) -> list[Field]:
    """Print the question, its fields and the choices; the fields."""
    paint = transcript.paint
    asks = strip_escapes(f"MCP server {question.server} asks:")
    transcript.emit(paint(asks, "bold", "yellow"))
    transcript.emit(strip_escapes(question.message), 1)
    fields = form_fields(question.schema)
    for field in fields:
        transcript.emit(f"- {strip_escapes(field.label())}", 1)
    transcript.emit("\n".join(f"{paint(key, 'bold', 'cyan')}  {label}" for key, label in CHOICES))
    return fields


async def fill_in(
    question: ev.McpQuestionAsked, fields: list[Field], line: Line, say: Callable[[str], None]
) -> ops.AnswerMcpQuestion:
    """Read each field's value; a value that does not fit is asked again (`TRIES` times)."""
    content = {}
    for field in fields:
        for _ in range(TRIES):
            text = await line(f"{strip_escapes(field.title)}: ")
            try:
                value = field_value(field, text)
            except ValueError as exc:
                say(f"({exc})")
                continue
            if value is not None:
                content[field.name] = value
            break
        else:
            return ops.AnswerMcpQuestion(ask_id=question.ask_id, action="cancel")
    return ops.AnswerMcpQuestion(ask_id=question.ask_id, action="accept", content=content)


def declined(question: ev.McpQuestionAsked, key: str) -> ops.AnswerMcpQuestion:
    """The answer for `d` (decline) or `c` (cancel)."""
    if key == "d":
        return ops.AnswerMcpQuestion(ask_id=question.ask_id, action="decline")
    return ops.AnswerMcpQuestion(ask_id=question.ask_id, action="cancel")
