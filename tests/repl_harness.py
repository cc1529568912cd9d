"""Running the plain REPL in-process for tests (not a test module): keys go in through
prompt_toolkit's pipe input, the transcript comes out into a buffer, the session is a
`FakeClient` that records the ops it receives.

Nothing sleeps to wait for the REPL: `until` polls a condition between turns of the event
loop, with a deadline.
"""

from __future__ import annotations

import asyncio
import io
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from prompt_toolkit.application.current import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput

from clocks import Clock
from moot.commands.registry import Registry
from moot.repl.look import Look
from moot.repl.repl import Repl
from moot.testing import FakeClient

ESCAPE = re.compile(r"\x1b\[[0-9;]*m")

STYLED = Look(plain=False, toolbar=True)
PLAIN = Look(plain=True, toolbar=False, why="NO_COLOR is set")


class Session:
    """A running REPL, its keyboard and its screen."""

    def __init__(self, repl: Repl, keys: PipeInput, out: io.StringIO, clock: Clock) -> None:
        self.repl, self.keys, self.out, self.clock = repl, keys, out, clock
        self.task: asyncio.Task[int] | None = None

    @property
    def client(self) -> FakeClient:
        return self.repl.client  # type: ignore[return-value]

    @property
    def text(self) -> str:
        """Everything printed so far, colours removed."""
        return ESCAPE.sub("", self.out.getvalue())

    def type(self, text: str) -> None:
        self.keys.send_text(text)

    async def until(self, condition: Callable[[], object], what: str, timeout: float = 5) -> None:
        """Let the REPL run until `condition()` holds."""
        deadline = time.monotonic() + timeout
        while not condition():
            if self.task is not None and self.task.done():
                self.task.result()  # the REPL ended: raise what ended it
                raise AssertionError(f"the REPL quit before {what}:\n{self.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"never saw {what}; printed:\n{self.text}")
            await asyncio.sleep(0.005)  # a turn of the event loop, bounded by the deadline

    async def printed(self, needle: str, timeout: float = 5) -> None:
        await self.until(lambda: needle in self.text, repr(needle), timeout)

    async def prompt_ready(self) -> None:
        """The session is open and the prompt reads keys."""
        await self.until(
            lambda: self.repl._reading and self.repl.session.pump_task is not None, "the prompt"
        )

    def ops(self, kind: type) -> list:
        return [op for op in self.client.ops if isinstance(op, kind)]


@asynccontextmanager
async def running_repl(
    client: FakeClient,
    *,
    look: Look = STYLED,
    task: str | None = None,
    history_path: Path | None = None,
    open_client: Callable[[], FakeClient] | None = None,
    open_session: Callable[[str], FakeClient] | None = None,
    registry: Registry | None = None,
    show_history: bool = False,
    connect: Callable[[], FakeClient] | None = None,
) -> AsyncIterator[Session]:
    clock = Clock()
    out = io.StringIO()
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        repl = Repl(
            connect or (lambda: client),
            look=look,
            out=out,
            task=task,
            clock=clock,
            history_path=history_path,
            open_client=open_client,
            open_session=open_session,
            registry=registry,
            show_history=show_history,
        )
        session = Session(repl, keys, out, clock)
        session.task = asyncio.create_task(repl.run())
        try:
            yield session
        finally:
            if not session.task.done():
                repl.exit()
                try:
                    await asyncio.wait_for(session.task, 5)
                except TimeoutError:
                    session.task.cancel()
