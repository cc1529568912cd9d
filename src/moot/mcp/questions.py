"""Servers' questions to the person (MCP elicitation, form mode), from moot's side.

The host answers `elicitation/create` by asking moot (`wire.Elicit`); moot puts the question to
whoever answers them (`Elicitor`: an SDK callback, or `PersonAsks`: the person, through the
session's events, in the app and the REPL) and sends the answer back (`wire.ElicitAnswer`).
Where nobody answers (`moot -p`, an editor over ACP), the servers are not told they may ask at
all (`wire.Setup.elicitation`), so they keep to what works without it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from moot.mcp import wire
from moot.mcp.sampling import Sampler
from moot.protocol import events as ev
from moot.protocol.ids import new_id

Elicitor = Callable[[str, str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any] | None]]]
"""Answers a server's question: (server, message, JSON schema of the answer) -> (`accept`,
`decline` or `cancel`; what was filled in, for `accept`)."""


class Questions:
    """Answers the servers' questions with `elicit`; `send` reaches the host (set once it
    exists). A question `elicit` fails on is declined."""

    def __init__(self, elicit: Elicitor | None, *, sampling_allowed: Collection[str] = ()) -> None:
        self.elicit = elicit
        self.sampling_allowed = frozenset(sampling_allowed)
        """Servers whose requests for the model run without asking (`mcpSamplingAllowed`)."""
        self.send: Callable[[wire.Request], object] = lambda request: None
        self.record: Callable[[ev.Event], object] | None = None
        self.sampler: Sampler | None = None
        self._asking: set[asyncio.Task[None]] = set()

    def asked(self, question: wire.Elicit) -> None:
        task = asyncio.get_running_loop().create_task(self._answer(question))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _answer(self, question: wire.Elicit) -> None:
        action: str = "decline"
        content: dict[str, Any] | None = None
        if question.sampling is not None:
            with contextlib.suppress(Exception):
                action, content = await self._sample(question.server, question.sampling)
        elif self.elicit is not None:
            with contextlib.suppress(Exception):
                action, content = await self.elicit(
                    question.server, question.message, question.schema
                )
        self.send(wire.ElicitAnswer(ask_id=question.ask_id, action=action, content=content))

    async def _sample(
        self, server: str, request: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        """A request for the model: approved by the person (`PersonAsks`), or let through for
        a server the user's settings allow; refused where neither can be."""
        from moot.mcp.sampling import sample

        if self.record is None or self.sampler is None:
            return "decline", None
        if server in self.sampling_allowed:
            ask: Any = _allowed
        elif isinstance(self.elicit, PersonAsks):
            ask = self.elicit
        else:
            return "decline", {"error": "nobody here can approve a request for the model"}
        return await sample(ask, self.record, self.sampler, server, request)

    def bind(self, record: Callable[[ev.Event], object], sampler: Sampler | None = None) -> None:
        """Record the servers' questions and requests through `record` (the session's events,
        where the person answers them when the session asks the person: `PersonAsks`), and
        send the requests for the model, once approved, to `sampler`."""
        self.record, self.sampler = record, sampler
        if isinstance(self.elicit, PersonAsks):
            self.elicit.record = record

    def answer(self, ask_id: str, action: str, content: dict[str, Any] | None) -> str:
        """The person's answer to a question `PersonAsks` put (`AnswerMcpQuestion`); returns
        the server that asked (`moot.core.options.McpQuestions`).

        Raises:
            KeyError: No such question waits.
        """
        if not isinstance(self.elicit, PersonAsks):
            raise KeyError(ask_id)
        return self.elicit.answer(ask_id, action, content)


class PersonAsks:
    """An `Elicitor` that puts each question to the person: an `mcp_question_asked` session
    event out (`record`, set once the session's runtime exists), the `AnswerMcpQuestion` op's
    answer back (`answer`). Questions wait as long as the server waits for them."""

    def __init__(self) -> None:
        self.record: Callable[[ev.Event], object] | None = None
        self._waiting: dict[str, tuple[str, asyncio.Future[tuple[str, dict[str, Any] | None]]]]
        self._waiting = {}

    async def __call__(
        self, server: str, message: str, schema: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None]:
        if self.record is None:
            return "decline", None
        ask_id = new_id("ask")
        future: asyncio.Future[tuple[str, dict[str, Any] | None]]
        future = asyncio.get_running_loop().create_future()
        self._waiting[ask_id] = (server, future)
        try:
            self.record(
                ev.McpQuestionAsked(ask_id=ask_id, server=server, message=message, schema=schema)
            )
            return await future
        finally:
            if self._waiting.pop(ask_id, None) is not None:  # the server stopped waiting
                with contextlib.suppress(Exception):  # the session may be closing
                    self.record(
                        ev.McpQuestionAnswered(
                            ask_id=ask_id, server=server, action="cancel", by="session"
                        )
                    )

    def answer(self, ask_id: str, action: str, content: dict[str, Any] | None) -> str:
        """Settle question `ask_id`; the server that asked. Raises KeyError: none waits."""
        server, future = self._waiting.pop(ask_id)
        if not future.done():
            future.set_result((action, content if action == "accept" else None))
        return server


async def _allowed(server: str, message: str, schema: dict[str, Any]) -> tuple[str, None]:
    """The answer for a server the user's settings let use the model: yes, unasked."""
    return "accept", None
