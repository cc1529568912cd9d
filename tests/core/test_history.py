"""`History`: the conversations a checkpoint saves item by item, and the tool call ids a call
may not use, kept as the conversations change rather than rebuilt from them."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.core.history import History, TakenIds
from moot.protocol.messages import Message, ToolResultMessage, UserMessage
from moot.store.memory import MemoryStore

KEYS = ("main", "main>helper")
IDS = tuple(f"t{n}" for n in range(6))

grow = st.tuples(
    st.just("grow"),
    st.sampled_from(KEYS),
    st.lists(st.sampled_from(IDS), max_size=3),
    st.one_of(st.none(), st.integers(min_value=0, max_value=12)),
)
"""A call that began with the conversation ends: its results' ids, and where it rewrote one
of its messages (None: it only added)."""
stale = st.tuples(st.just("stale"), st.sampled_from(KEYS), st.integers(min_value=0))
"""A call that began with an earlier version of the conversation ends after another did."""
compact = st.tuples(st.just("compact"), st.sampled_from(KEYS))
save = st.tuples(st.just("save"), st.booleans())
"""A checkpoint save, kept or refused (a newer one is stored)."""


def result(tool_call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=tool_call_id, name="echo", content="1")


def ids_in(messages: list[Message] | None) -> set[str]:
    return {m.tool_call_id for m in messages or () if isinstance(m, ToolResultMessage)}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(grow, stale, compact, save), max_size=25))
def test_the_checkpoint_reads_back_the_conversations_and_taken_ids_are_those_a_call_began_with(
    steps: list[tuple],
) -> None:
    store = MemoryStore()
    sid = store.create_session().id
    history = History()
    versions: dict[str, list[list[Message] | None]] = {key: [None] for key in KEYS}
    taken: list[tuple[TakenIds, set[str]]] = []
    seq = 0
    for step in steps:
        match step:
            case ("grow", key, ids, rewrite):
                began = history.get(key)
                taken.append((history.taken(key), ids_in(began)))
                messages = [*(began or ()), UserMessage(content="go"), *map(result, ids)]
                kept = len(began or ())
                if rewrite is not None and rewrite < len(messages):
                    messages[rewrite] = UserMessage(content="rewritten")
                    kept = min(kept, rewrite)
                history.replace(key, messages, began=began, kept=kept)
                versions[key].append(messages)
            case ("stale", key, pick):
                began = versions[key][pick % len(versions[key])]
                taken.append((history.taken(key), ids_in(history.get(key))))
                messages = [*(began or ()), UserMessage(content="late"), result("t5")]
                history.replace(key, messages, began=began, kept=len(began or ()))
                versions[key].append(messages)
            case ("compact", key):
                began = history.get(key)
                messages = [UserMessage(content="summary"), *(began or ())[-1:]]
                history.replace(key, messages, began=began, kept=0)
                versions[key].append(messages)
            case ("save", refused):
                seq += 1
                kept = store.save_checkpoint(
                    sid, "session", 0 if refused else seq, {}, history.unsaved()
                )
                history.saved(kept=kept)
                if kept:
                    lists = store.checkpoint_lists(sid, "session")
                    read = {
                        key: msgspec.json.decode(items, type=list[Message])
                        for key, items in lists.items()
                    }
                    assert read == dict(history)
    for ids, expected in taken:
        assert {i for i in IDS if i in ids} == expected
        ids.update(["own"])
        assert "own" in ids


def test_a_call_that_began_before_the_conversation_grew_takes_only_what_it_began_with() -> None:
    history = History({"main": [UserMessage(content="go"), result("t1")]})
    first = history.taken("main")
    grown = [*history["main"], UserMessage(content="more"), result("t2")]
    history.replace("main", grown, began=history["main"], kept=2)
    assert "t1" in first and "t2" not in first
    assert "t1" in history.taken("main") and "t2" in history.taken("main")
