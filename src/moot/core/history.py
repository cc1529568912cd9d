"""A session's conversations over its finished runs, kept so that no turn walks, copies or
encodes the whole of them.

`History` maps each agent (and each caller>callee exchange) to its conversation, as the fold
of the log leaves it, and keeps beside it what a turn would otherwise rebuild from the whole:

- the conversation's own list goes on as the messages of the call that begins with it
  (`begin`): the call appends to it, and the history reads it only up to where it ended, so
  no turn copies it (a second call that begins with it meanwhile gets a copy);
- the tool call ids its results hold, each with its position: a new turn's ids must differ
  from them (`taken`), and the index grows with the conversation;
- how much of each conversation the store's checkpoint already holds as it is now, so a
  checkpoint writes what a run added, not the history again (`unsaved`, `saved`);
- what the pre-flight check counts of each conversation (`Weights`, which go with its list to
  the call that appends to it), so no request is weighed by a walk of the conversation.

A conversation changes only by `replace`: a run's call ends, and what it closed with begins
with the messages the call began with, unless the call rewrote them (`CallState.kept`: a
compaction); or by `rewrite`: a compaction between runs. Neither the index, the weights nor
the count of saved messages is part of the fold's state: they follow from the conversations,
and a resumed session rebuilds them (once, at its first turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import overload

import msgspec

from moot.protocol.messages import Message, ToolResultMessage, with_data, without_image
from moot.providers.base import WeighedMessages, message_chars
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


class Weights:
    """What `estimate_tokens` counts of a list of messages (`message_chars`), as sums over its
    first messages, counted as the list grows: weighing the list again costs what it gained.
    The sums describe the list they go with; who changes a message of it cuts them there
    (`cut`). Each is kept twice: for the messages as they are, and as a model that takes no
    images gets them (`without_image`)."""

    __slots__ = ("_bare", "_chars")

    def __init__(self) -> None:
        self._chars = [0]
        """`_chars[n]`: the characters of the first n messages."""
        self._bare = [0]
        """The same, each attachment a note in its place."""

    def upto(self, messages: Sequence[Message], length: int) -> tuple[int, int]:
        """The characters of the first `length` of `messages` (the list these weights go
        with), and as a model without images gets them."""
        chars, bare = self._chars, self._bare
        for at in range(len(chars) - 1, length):  # by index: islice would walk to the start
            message = messages[at]
            weight = message_chars(message)
            chars.append(chars[-1] + weight)
            plain = without_image(message)
            bare.append(bare[-1] + (weight if plain is message else message_chars(plain)))
        return chars[length], bare[length]

    def cut(self, at: int) -> None:
        """The messages from `at` on change: forget their weights."""
        del self._chars[at + 1 :], self._bare[at + 1 :]

    def copy(self, upto: int) -> Weights:
        """Weights of a copy of the list whose messages from `upto` on change."""
        copied = Weights()
        copied._chars, copied._bare = self._chars[: upto + 1], self._bare[: upto + 1]
        return copied


class MessagesView(WeighedMessages):
    """The first `length` messages of a call's list, read-only and never changing: what a
    model request carries, without a copy of the conversation. The call only appends to the
    list past them, and copies the list before it changes one of them (`CallState.rewrites`).
    A sequence, not a tuple: `tuple(view)` makes one (msgspec encodes tuples, not views).
    `chars` is what `estimate_tokens` counts of them (`Weights`)."""

    __slots__ = ("_items", "_length", "chars")

    def __init__(self, items: list[Message], length: int, chars: int) -> None:
        self._items, self._length, self.chars = items, length, chars

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):  # only what it picks: no copy of the rest
            return [self._items[at] for at in range(self._length)[index]]
        at = index + self._length if index < 0 else index
        if not 0 <= at < self._length:
            raise IndexError("message index out of range")
        return self._items[at]

    def __iter__(self) -> Iterator[Message]:
        return islice(self._items, self._length)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (MessagesView, tuple, list)):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class ResolvingView(MessagesView):
    """A `MessagesView` whose attachments held by reference (a resumed history's: the store
    keeps their bytes, `Attachment.ref`) are given their data as they are read, so a resume
    reads no image and a request carries each one whole."""

    __slots__ = ("_data_of",)

    def __init__(
        self, items: list[Message], length: int, chars: int, data_of: Callable[[str], str]
    ) -> None:
        super().__init__(items, length, chars)
        self._data_of = data_of

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [with_data(m, self._data_of) for m in super().__getitem__(index)]
        return with_data(super().__getitem__(index), self._data_of)

    def __iter__(self) -> Iterator[Message]:
        return (with_data(m, self._data_of) for m in super().__iter__())


class ImagelessView(MessagesView):
    """A `MessagesView` for a model that takes no images: each message with attachments is
    read with a note in their place (`without_image`), as it is read, so nothing is copied."""

    __slots__ = ()

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [without_image(m) for m in super().__getitem__(index)]
        return without_image(super().__getitem__(index))

    def __iter__(self) -> Iterator[Message]:
        return map(without_image, super().__iter__())


class Beginning(msgspec.Struct, frozen=True):
    """What a call that begins with a conversation of the history goes on from."""

    messages: list[Message]
    """The conversation, for the call to append to: the history's own list (`shared`), or a
    copy of it."""
    length: int
    """How many messages the conversation holds."""
    version: int
    """Which version of the conversation it is (`History.replace` compares it)."""
    shared: bool
    """`messages` is the history's own list: its first `length` must not change."""
    taken: TakenIds
    """The tool call ids of the conversation's results."""
    weights: Weights
    """The weights of `messages` (the history's own, with its own list)."""


class History(Mapping[str, list[Message]]):
    """Each agent's conversation over the finished runs, by history key (an agent's name, or
    `exchange(caller, callee)`). A conversation read here is the history's own list unless a
    running call has appended to it (then a copy of the part that is history): read it, never
    change it; change a conversation only with `replace` or `rewrite`."""

    def __init__(
        self, conversations: Mapping[str, list[Message]] | None = None, *, saved: bool = False
    ) -> None:
        """Begin with `conversations` (their lists themselves); `saved`: the store's
        checkpoint holds them as they are (they were just read from it)."""
        self._lists: dict[str, list[Message]] = dict(conversations or {})
        self._lengths = {key: len(messages) for key, messages in self._lists.items()}
        """How many messages of each list are the conversation (a call may have appended)."""
        self._versions: dict[str, int] = {}
        self._lent: set[str] = set()
        """The conversations whose own list a running call appends to (`begin`)."""
        self._weights: dict[str, Weights] = {}
        """The weights of each conversation's list weighed so far (they go with the list)."""
        self._saved = dict(self._lengths) if saved else {}
        """For each conversation, how many of its first messages the checkpoint holds."""
        self._changed: set[str] = set() if saved else set(self._lists)
        """The conversations changed since the last checkpoint."""
        self._results: dict[str, dict[str, int]] = {}
        """For each conversation indexed so far, its results' tool call ids -> positions."""

    def __getitem__(self, key: str) -> list[Message]:
        messages, length = self._lists[key], self._lengths[key]
        return messages if len(messages) == length else messages[:length]

    def __iter__(self) -> Iterator[str]:
        return iter(self._lists)

    def __len__(self) -> int:
        return len(self._lists)

    def begin(self, key: str | None) -> Beginning:
        """A call begins with the conversation `key` (None: with none): the conversation's own
        list, which the call appends to, unless another call already does (then a copy)."""
        messages = self._lists.get(key) if key is not None else None
        if key is None or messages is None:
            return Beginning([], 0, 0, shared=False, taken=TakenIds(), weights=Weights())
        length = self._lengths[key]
        shared = key not in self._lent and len(messages) == length
        if shared:
            self._lent.add(key)
            weights = self._weights.setdefault(key, Weights())
        else:
            messages, weights = messages[:length], Weights()
        version = self._versions.get(key, 0)
        taken = self._taken(key)
        return Beginning(messages, length, version, shared=shared, taken=taken, weights=weights)

    def replace(
        self,
        key: str,
        messages: list[Message],
        *,
        version: int,
        kept: int,
        weights: Weights | None = None,
    ) -> None:
        """Make `messages` the conversation `key`.

        Args:
            key: The history key.
            messages: The new conversation (the list itself is kept).
            version: The version of the conversation the call began with (`Beginning`).
            kept: How many of that conversation's first messages begin `messages` unchanged.
            weights: Weights of `messages`' first messages as they are (the call's); None:
                weighed anew when a call begins with it.
        """
        if self._versions.get(key, 0) != version:
            kept = 0  # another call replaced it meanwhile: nothing is known to be kept
        length = self._lengths.get(key, 0)
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
        self._lists[key], self._lengths[key] = messages, len(messages)
        self._weights[key] = weights if weights is not None else Weights()
        self._versions[key] = self._versions.get(key, 0) + 1
        self._lent.discard(key)
        self._saved[key] = min(self._saved.get(key, 0), kept)
        self._changed.add(key)

    def rewrite(self, key: str, messages: list[Message]) -> None:
        """Make `messages` the conversation `key`, none of it known to be kept (a compaction
        between runs)."""
        self.replace(key, messages, version=self._versions.get(key, 0), kept=0)

    def unsaved(self) -> dict[str, ListTail]:
        """What a checkpoint must write of each conversation changed since the last one: its
        messages from the first the checkpoint does not hold as they are now, as JSON."""
        tails = {}
        for key in self._changed:
            start, end = self._saved.get(key, 0), self._lengths[key]
            tails[key] = ListTail(start, [_encode(m) for m in self._lists[key][start:end]])
        return tails

    def saved(self, *, kept: bool) -> None:
        """The checkpoint `unsaved` was for is stored (`kept`), or was refused: a newer one
        holds something else, so the next writes every conversation whole."""
        if kept:
            self._saved = dict(self._lengths)
            self._changed.clear()
        else:
            self._saved = {}
            self._changed = set(self._lists)

    def _taken(self, key: str) -> TakenIds:
        index = self._results.get(key)
        if index is None:
            # Once per conversation and process (a resumed session's first turn, or after a
            # compaction rewrote it): from then on it grows with the conversation.
            index = self._results[key] = {}
            for at, message in enumerate(self[key]):
                if isinstance(message, ToolResultMessage):
                    index.setdefault(message.tool_call_id, at)
        return TakenIds(index, self._lengths[key])
