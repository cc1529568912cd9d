"""A session's conversations over its finished runs, kept so that no turn walks, copies or
encodes the whole of them.

`History` maps each agent (and each caller>callee exchange) to its conversation, as the fold
of the log leaves it, and keeps beside it what a turn would otherwise rebuild from the whole:

- the tool call ids its results hold, each with its position: a new turn's ids must differ
  from them (`taken`), and the index grows with the conversation;
- how much of each conversation the store's checkpoint already holds as it is now, so a
  checkpoint writes what a run added, not the history again (`unsaved`, `saved`).

A conversation changes only by `replace`: a run's call ends, and what it closed with begins
with the messages the call began with, unless the call rewrote them (`CallState.kept`: a
compaction); or a compaction between runs rewrites it whole. Neither the index nor the count
of saved messages is part of the fold's state: both follow from the conversations, and a
resumed session rebuilds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from moot.protocol.messages import Message, ToolResultMessage
from moot.store.base import ListTail

_encode = msgspec.json.Encoder().encode


class TakenIds:
    """The tool call ids a call's model may not use again: those of the results in the
    conversation it began with (a shared index, read up to where that conversation ended),
    and those its own turns used."""

    __slots__ = ("_earlier", "_limit", "_own")

    def __init__(self, earlier: Mapping[str, int] | None = None, limit: int = 0) -> None:
        self._earlier: Mapping[str, int] = {} if earlier is None else earlier
        self._limit = limit
        self._own: set[str] = set()

    def __contains__(self, tool_call_id: object) -> bool:
        if tool_call_id in self._own:
            return True
        at = self._earlier.get(tool_call_id) if isinstance(tool_call_id, str) else None
        return at is not None and at < self._limit

    def update(self, tool_call_ids: Iterable[str]) -> None:
        """Take these ids too."""
        self._own.update(tool_call_ids)


class History(dict[str, list[Message]]):
    """Each agent's conversation over the finished runs, by history key (an agent's name, or
    `exchange(caller, callee)`); change one only with `replace`."""

    def __init__(
        self, conversations: Mapping[str, list[Message]] | None = None, *, saved: bool = False
    ) -> None:
        """Begin with `conversations`; `saved`: the store's checkpoint holds them as they
        are (they were just read from it)."""
        super().__init__(conversations or {})
        self._saved = {key: len(messages) for key, messages in self.items()} if saved else {}
        """For each conversation, how many of its first messages the checkpoint holds."""
        self._changed: set[str] = set() if saved else set(self)
        """The conversations changed since the last checkpoint."""
        self._results: dict[str, dict[str, int]] = {}
        """For each conversation indexed so far, its results' tool call ids -> positions."""

    def replace(
        self, key: str, messages: list[Message], *, began: list[Message] | None, kept: int
    ) -> None:
        """Make `messages` the conversation `key`.

        Args:
            key: The history key.
            messages: The new conversation.
            began: The conversation the call began with (the list itself), None if none.
            kept: How many of `began`'s first messages begin `messages` unchanged.
        """
        now = self.get(key)
        if now is not began:
            kept = 0  # another call replaced it meanwhile: nothing is known to be kept
        length = len(now) if now is not None else 0
        index = self._results.get(key)
        if index is not None and kept == length:
            # The conversation grew at its end: index what it gained; positions before are
            # unchanged, and a call that began before reads the index only up to `length`.
            for at in range(length, len(messages)):
                message = messages[at]
                if isinstance(message, ToolResultMessage):
                    index.setdefault(message.tool_call_id, at)
        elif index is not None:
            del self._results[key]  # a new index when next asked: an old one stays whole
        self._saved[key] = min(self._saved.get(key, 0), kept)
        self._changed.add(key)
        super().__setitem__(key, messages)

    def taken(self, key: str) -> TakenIds:
        """The tool call ids a call that begins with the conversation `key` may not use."""
        messages = self.get(key)
        if not messages:
            return TakenIds()
        index = self._results.get(key)
        if index is None:
            # Once per conversation and process (a resumed session's first turn, or after a
            # compaction rewrote it): from then on it grows with the conversation.
            index = self._results[key] = {}
            for at, message in enumerate(messages):
                if isinstance(message, ToolResultMessage):
                    index.setdefault(message.tool_call_id, at)
        return TakenIds(index, len(messages))

    def unsaved(self) -> dict[str, ListTail]:
        """What a checkpoint must write of each conversation changed since the last one: its
        messages from the first the checkpoint does not hold as they are now, as JSON."""
        tails = {}
        for key in self._changed:
            start = self._saved.get(key, 0)
            tails[key] = ListTail(start, [_encode(m) for m in self[key][start:]])
        return tails

    def saved(self, *, kept: bool) -> None:
        """The checkpoint `unsaved` was for is stored (`kept`), or was refused: a newer one
        holds something else, so the next writes every conversation whole."""
        if kept:
            self._saved = {key: len(messages) for key, messages in self.items()}
            self._changed.clear()
        else:
            self._saved = {}
            self._changed = set(self)
