"""Titles a session's model writes (the `modelTitles` setting; off by default).

After a session's first turn its model is asked once, in a tiny request of its own outside every
run, for a short title. No fold takes the answer: it becomes a `session_renamed` event
(`by="model"`) that carries what the request cost, for the ledger, as a compaction summary does.
Without the setting no model is asked: a session is titled by its first prompt's first line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from moot.protocol import events as ev
from moot.protocol.messages import Usage, UserMessage
from moot.protocol.titles import TITLE_LENGTH
from moot.providers.base import ModelRequest, ask_text

if TYPE_CHECKING:
    from moot.core.agent import Agent
    from moot.providers.base import Provider
    from moot.store.base import Store

TITLE_SYSTEM = (
    "You name coding sessions. Reply with a title of at most six words for the session that "
    "begins with the exchange below: no quotes, no full stop, nothing else."
)
PROMPT_CHARS = 2_000
"""Of the first prompt, what the model reads."""
ANSWER_CHARS = 600
"""Of the first answer, what the model reads."""
MAX_OUTPUT_TOKENS = 32
"""A title is a few words: the request asks for no more."""


class Titled(msgspec.Struct, frozen=True):
    """What a title request answered, and what it cost."""

    title: str
    """The title, tidied (`tidy_title`); empty when the answer held none."""
    model: str
    usage: Usage
    cost_usd: float


async def ask_title(provider: Provider, *, prompt: str, answer: str, agent: str) -> Titled:
    """Ask `provider` for a title of the session whose first turn was `prompt` -> `answer`.

    Raises:
        ProviderError: the model failed.
    """
    text = f"The person asked:\n{prompt[:PROMPT_CHARS]}"
    if answer:
        text += f"\n\nThe first answer began:\n{answer[:ANSWER_CHARS]}"
    request = ModelRequest(
        model=provider.name,
        system=TITLE_SYSTEM,
        messages=(UserMessage(content=text),),
        agent=agent,
        max_output_tokens=MAX_OUTPUT_TOKENS,
        purpose="title",
    )
    text, usage, cost = await ask_text(provider, request)
    return Titled(tidy_title(text), provider.name, usage, cost)


def tidy_title(text: str) -> str:
    """A model's answer as a title: its first non-blank line, without a `Title:` label, quotes
    or a full stop, its whitespace collapsed, cut to `TITLE_LENGTH`."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    words = " ".join(line.split())
    if words.lower().startswith("title:"):
        words = words[len("title:") :].strip()
    words = words.strip("\"'`*“”‘’").rstrip(".").strip()
    return words[:TITLE_LENGTH]


class Titler:
    """A session's one title request: considered after the first run a runtime finishes, made
    only when that run was the session's first and no title was chosen (no `session_renamed`),
    and recorded only if none was chosen while it was asked.

    Args:
        store: The session's store.
        session_id: The session.
        agent: The agent whose model writes the title (the runtime's first, as it is now).
        provider_for: The runtime's providers by agent (made once per model).
        record: Records a session event (`Runtime.record_session`).
    """

    def __init__(
        self,
        store: Store,
        session_id: str,
        agent: Callable[[], Agent],
        provider_for: Callable[[Agent], Provider],
        record: Callable[[ev.Event], ev.Event],
    ) -> None:
        self._store, self._session_id = store, session_id
        self._agent, self._provider_for, self._record = agent, provider_for, record
        self._considered = False
        self.task: asyncio.Task[None] | None = None
        """The request under way or done; None until one is made."""

    def consider(self, finished: ev.TurnFinished) -> None:
        """A run has finished: start the request if it was the session's first (once)."""
        if self._considered:
            return
        self._considered = True
        starts = self._store.events(self._session_id, kinds=("turn_started",), limit=2)
        if len(starts) != 1 or not isinstance(starts[0], ev.TurnStarted) or self._renamed():
            return
        self.task = asyncio.get_running_loop().create_task(
            self._write(starts[0].prompt, finished.output), name="moot-title"
        )

    async def written(self, timeout: float) -> None:
        """Wait at most `timeout` seconds for the request to record its answer; one that takes
        longer is cancelled (the session keeps the title it has)."""
        task = self.task
        if task is None or task.done():
            return
        await asyncio.wait({task}, timeout=timeout)
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _renamed(self) -> bool:
        return bool(self._store.events(self._session_id, kinds=("session_renamed",), limit=1))

    async def _write(self, prompt: str, answer: str) -> None:
        agent = self._agent()
        try:
            titled = await ask_title(
                self._provider_for(agent), prompt=prompt, answer=answer, agent=agent.name
            )
        except Exception:  # a title is a nicety: whatever fails, the first prompt's stays
            return
        if not titled.title or self._renamed():  # none given, or the person named it meanwhile
            return
        info = self._store.session(self._session_id)
        self._record(
            ev.SessionRenamed(
                title=titled.title,
                previous=info.title if info is not None else "",
                by="model",
                model=titled.model,
                usage=titled.usage,
                cost_usd=titled.cost_usd,
            )
        )
