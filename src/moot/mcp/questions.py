"""Servers' questions to the person (MCP elicitation, form mode), from moot's side.

The host answers `elicitation/create` by asking moot (`wire.Elicit`); moot puts the question to
whoever answers them (`Elicitor`: an SDK callback) and sends the answer back
(`wire.ElicitAnswer`). Where nobody answers, the servers are not told they may ask at all
(`wire.Setup.elicitation`), so they keep to what works without it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from moot.mcp import wire

Elicitor = Callable[[str, str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any] | None]]]
"""Answers a server's question: (server, message, JSON schema of the answer) -> (`accept`,
`decline` or `cancel`; what was filled in, for `accept`)."""


class Questions:
    """Answers the servers' questions with `elicit`; `send` reaches the host (set once it
    exists). A question `elicit` fails on is declined."""

    def __init__(self, elicit: Elicitor | None) -> None:
        self.elicit = elicit
        self.send: Callable[[wire.Request], object] = lambda request: None
        self._asking: set[asyncio.Task[None]] = set()

    def asked(self, question: wire.Elicit) -> None:
        task = asyncio.get_running_loop().create_task(self._answer(question))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _answer(self, question: wire.Elicit) -> None:
        action: str = "decline"
        content: dict[str, Any] | None = None
        if self.elicit is not None:
            with contextlib.suppress(Exception):
                action, content = await self.elicit(
                    question.server, question.message, question.schema
                )
        self.send(wire.ElicitAnswer(ask_id=question.ask_id, action=action, content=content))
