"""`History`: the conversations a call goes on with (their own lists, not copies), the tool call
ids a call may not use and what a checkpoint saves item by item, kept as the conversations
change rather than rebuilt from them."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from moot.core.call_state import CallState
from moot.core.history import History, MessagesView, TakenIds
from moot.protocol.messages import (
    Attachment,
    Message,
    ToolResultMessage,
    UserMessage,
    without_images,
)
from moot.providers.base import message_chars
from moot.store.memory import MemoryStore

KEYS = ("main", "main>helper")
IDS = tuple(f"t{n}" for n in range(6))

begin = st.tuples(st.just("begin"), st.sampled_from(KEYS))
"""A call begins with a conversation (several may at once)."""
picks = st.integers(min_value=0)
add = st.tuples(
    st.just("add"), picks, st.lists(st.sampled_from(IDS), max_size=3), st.integers(0, 2)
)
"""An open call appends a message (with images, some) and tool results."""
change = st.tuples(st.just("change"), picks, st.integers(min_value=0))
"""An open call changes one of its messages in place (as a hook or the gate does)."""
compact = st.tuples(st.just("compact"), picks)
"""An open call compacts its messages (a list of its own)."""
end = st.tuples(st.just("end"), picks)
"""An open call ends: the conversation is what it closed with."""
view = st.tuples(st.just("view"), picks)
"""A model request takes a view of an open call's messages."""
between = st.tuples(st.just("between"), st.sampled_from(KEYS))
"""A compaction between runs rewrites a conversation."""
save = st.tuples(st.just("save"), st.booleans())
"""A checkpoint save, kept or refused (a newer one is stored)."""


def result(tool_call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=tool_call_id, name="echo", content="1")


def with_images(count: int) -> UserMessage:
    image = Attachment(mime_type="image/png", data="aGk=")
    return UserMessage(content="look" if count % 2 else "", attachments=(image,) * count)


def weighed(messages: list[Message]) -> tuple[int, int]:
    """What the pre-flight check counts of `messages`, walking them: as they are, and as a
    model without images reads them."""
    plain = without_images(messages)
    return sum(map(message_chars, messages)), sum(map(message_chars, plain))


def ids_in(messages: list[Message]) -> set[str]:
    return {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)}


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(begin, add, change, compact, end, view, between, save), max_size=30))
def test_calls_going_on_with_the_historys_lists_leave_it_as_the_fold_says(
    steps: list[tuple],
) -> None:
    """Whatever calls do with the conversations they began with, the history reads what the
    calls that ended closed with, the checkpoint reads back the same, a request's view of a
    call's messages never changes and weighs what a walk of them would, and a call's taken
    ids are those of the conversation it began with and its own."""
    store = MemoryStore()
    sid = store.create_session().id
    history = History()
    expected: dict[str, list[Message]] = {}
    open_calls: list[tuple[str, CallState]] = []
    taken: list[tuple[TakenIds, set[str]]] = []
    views: list[tuple[MessagesView, list[Message]]] = []
    seq = 0
    for step in steps:
        match step:
            case ("begin", key):
                call = CallState(call_id="c", agent=key, caller="user", depth=0)
                call.begin(history.begin(key), UserMessage(content="go"))
                taken.append((call.tool_call_ids, ids_in(expected.get(key, []))))
                open_calls.append((key, call))
            case ("add", pick, ids, images) if open_calls:
                _, call = open_calls[pick % len(open_calls)]
                call.messages.extend([with_images(images), *map(result, ids)])
            case ("change", pick, at) if open_calls:
                _, call = open_calls[pick % len(open_calls)]
                at %= len(call.messages)
                call.rewrites(at)
                call.messages[at] = UserMessage(content="changed")
            case ("compact", pick) if open_calls:
                _, call = open_calls[pick % len(open_calls)]
                call.replaced([UserMessage(content="summary"), *call.messages[-1:]])
            case ("view", pick) if open_calls:
                _, call = open_calls[pick % len(open_calls)]
                full, bare = call.view(), call.view(images=False)
                assert (full.chars, bare.chars) == weighed(call.messages)
                assert list(bare) == without_images(call.messages)
                views.append((full, list(call.messages)))
            case ("end", pick) if open_calls:
                key, call = open_calls.pop(pick % len(open_calls))
                history.replace(
                    key, call.messages, version=call.version, kept=call.kept, weights=call.weights
                )
                expected[key] = list(call.messages)
            case ("between", key) if key in history:
                compacted = [UserMessage(content="summary"), *history[key][-1:]]
                history.rewrite(key, compacted)
                expected[key] = list(compacted)
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
                    assert read == expected
        assert dict(history) == expected
        for seen, then in views:
            assert list(seen) == then and len(seen) == len(then)
            assert seen == then and (not then or seen[-1] == then[-1])
    for ids, began_with in taken:
        assert {i for i in IDS if i in ids} == began_with
        ids.update(["own"])
        assert "own" in ids


def test_a_call_goes_on_with_the_conversations_own_list_and_a_second_with_a_copy() -> None:
    conversation: list[Message] = [UserMessage(content="go"), result("t1")]
    history = History({"main": conversation})
    first, second = (CallState(call_id=c, agent="main", caller="user", depth=0) for c in "ab")
    first.begin(history.begin("main"), UserMessage(content="again"))
    second.begin(history.begin("main"), UserMessage(content="meanwhile"))
    assert first.messages is conversation and second.messages is not conversation
    assert history["main"] == conversation[:2] and len(conversation) == 3  # read up to its end
    first.messages.append(result("t2"))
    history.replace("main", first.messages, version=first.version, kept=first.kept)
    assert "t1" in second.tool_call_ids and "t2" not in second.tool_call_ids
    third = CallState(call_id="c", agent="main", caller="user", depth=0)
    third.begin(history.begin("main"), UserMessage(content="later"))
    assert third.messages is conversation and "t2" in third.tool_call_ids


def a_call(history: History, key: str = "main", first: str = "go") -> CallState:
    call = CallState(call_id="c", agent=key, caller="user", depth=0)
    call.begin(history.begin(key), UserMessage(content=first))
    return call


def end(history: History, call: CallState, key: str = "main") -> None:
    history.replace(key, call.messages, version=call.version, kept=call.kept, weights=call.weights)


def saved_and_read(history: History, store: MemoryStore, sid: str, seq: int) -> list[Message]:
    assert store.save_checkpoint(sid, "session", seq, {}, history.unsaved())
    history.saved(kept=True)
    return msgspec.json.decode(store.checkpoint_lists(sid, "session")["main"], type=list[Message])


def test_a_conversation_a_call_compacted_is_saved_whole_and_indexed_anew() -> None:
    store = MemoryStore()
    sid = store.create_session().id
    history = History()
    first = a_call(history)
    first.messages.append(result("t1"))
    end(history, first)
    assert saved_and_read(history, store, sid, 1) == history["main"]
    second = a_call(history)
    assert "t1" in second.tool_call_ids
    compacted = [UserMessage(content="summary"), UserMessage(content="go"), *second.messages[2:]]
    second.replaced(compacted)  # as the fold takes a compaction in
    end(history, second)
    assert saved_and_read(history, store, sid, 2) == compacted
    assert "t1" not in a_call(history).tool_call_ids  # the summary holds no result


def test_a_call_that_ends_after_another_rewrote_the_conversation_keeps_nothing_of_it() -> None:
    """Two calls began with one conversation; the first compacted it and ended, and a save
    followed: the second's end is saved whole, not from where the conversation it began with
    ended."""
    store = MemoryStore()
    sid = store.create_session().id
    history = History()
    end(history, a_call(history))
    saved_and_read(history, store, sid, 1)
    first, second = a_call(history), a_call(history, first="meanwhile")
    first.replaced([UserMessage(content="summary")])
    end(history, first)
    saved_and_read(history, store, sid, 2)
    end(history, second)
    assert saved_and_read(history, store, sid, 3) == second.messages


def test_a_call_that_took_its_first_message_back_still_has_the_list_to_itself() -> None:
    """A prompt a hook refuses is taken out of the call's messages: the conversation's list
    is as long as the history's conversation again, and still the call's alone."""
    history = History({"main": [UserMessage(content="hello")]})
    first = a_call(history)
    first.rewrites(1)
    del first.messages[1]
    second = a_call(history, first="meanwhile")
    assert second.messages is not first.messages
    assert history["main"] == [UserMessage(content="hello")]
