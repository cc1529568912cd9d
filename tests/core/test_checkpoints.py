"""A session's checkpoint: written item by item, so a turn's save costs what the turn added
however long the session; what it loads equals the fold of the whole log; a checkpoint an
older moot wrote (the whole history as one value) still loads, and the session goes on."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moot.core.agent import Agent
from moot.core.limits import Limits
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.core.session import CHECKPOINT, load_session
from moot.protocol import events as ev
from moot.protocol.messages import ToolResultMessage
from moot.providers.base import ModelRequest
from moot.providers.scripted import FunctionProvider
from moot.store.sqlite import SQLiteStore
from moot.tools import tool
from moot.tools.base import SideEffect
from runtime_helpers import of, run_turn

if TYPE_CHECKING:
    from moot.store.base import ListTail

SCHEMA_2 = Path(__file__).parents[1] / "fixtures" / "schema2.db"
"""A database moot wrote at schema version 2 (`fixtures/make_schema2_db.py` says what it holds)."""


@tool(side_effect=SideEffect.READ_ONLY)
def echo(n: int) -> int:
    """Return n."""
    return n


class CountedSaves:
    """The same store, counting the bytes each checkpoint save hands it."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.sizes: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def save_checkpoint(
        self,
        session_id: str,
        run_id: str,
        seq: int,
        data: dict[str, Any],
        lists: Mapping[str, ListTail] | None = None,
    ) -> bool:
        items = sum(len(item) for tail in (lists or {}).values() for item in tail.items)
        self.sizes.append(len(json.dumps(data)) + items)
        if lists is None:
            return self.store.save_checkpoint(session_id, run_id, seq, data)
        return self.store.save_checkpoint(session_id, run_id, seq, data, lists)


class NoCheckpoints:
    """The same store, minus checkpoints: `load_session` folds the whole log."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def latest_checkpoint(self, session_id: str, run_id: str) -> None:
        return None


def reused_ids(request: ModelRequest) -> object:
    """A model that answers every prompt with a call of id `t1` (ids a script repeats), then
    says it is done."""
    if isinstance(request.messages[-1], ToolResultMessage):
        return "ok"
    return {"tool_calls": [{"id": "t1", "name": "echo", "arguments": {"n": 1}}]}


def fresh_ids(request: ModelRequest) -> object:
    """The same, with a new id each turn (as a provider's are): `t` and the messages' count."""
    if isinstance(request.messages[-1], ToolResultMessage):
        return "ok"
    call = {"id": f"t{len(request.messages):03}", "name": "echo", "arguments": {"n": 1}}
    return {"tool_calls": [call]}


def runtime(store: Any, session_id: str | None = None, model: Any = reused_ids) -> Runtime:
    agent = Agent("main", model=FunctionProvider(model))
    options = RuntimeOptions(tools=[echo])
    return Runtime([agent], store=store, options=options, session_id=session_id)


async def test_a_turns_checkpoint_writes_what_the_turn_added_however_long_the_session(
    tmp_path: Path,
) -> None:
    store = CountedSaves(SQLiteStore(tmp_path / "s.db"))
    live = runtime(store, model=fresh_ids)
    for n in range(30):
        await run_turn(live, f"step {n:02}")
    # Each turn adds the same: a prompt, a call, its result, an answer.
    assert store.sizes[-1] == store.sizes[1]
    conversation = live.conversation()
    assert len(conversation) == 4 * 30
    live.submit(ev_shutdown())

    loaded = load_session(store.store, live.session_id, Limits())
    folded = load_session(NoCheckpoints(store.store), live.session_id, Limits())  # type: ignore[arg-type]
    assert loaded.history == folded.history == {"main": conversation}
    store.store.close()


async def test_tool_call_ids_stay_unique_across_a_resume_from_the_checkpoint(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    first = runtime(SQLiteStore(db))
    await run_turn(first, "one")
    await run_turn(first, "two")
    first.submit(ev_shutdown())
    again = runtime(SQLiteStore(db), first.session_id)
    _, events = await run_turn(again, "three")
    (started,) = of(events, ev.ToolStarted)
    assert started.tool_call_id == "t1__"  # t1 and t1_ are in the conversation it loaded
    again.submit(ev_shutdown())


async def test_a_checkpoint_an_older_moot_wrote_loads_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """The fixture's session holds a tool call `call_1` and two turns, checkpointed whole."""
    db = tmp_path / "sessions.db"
    shutil.copy(SCHEMA_2, db)
    store = SQLiteStore(db)
    full = load_session(NoCheckpoints(store), "ses_talk", Limits())  # type: ignore[arg-type]
    assert store.latest_checkpoint("ses_talk", CHECKPOINT) is not None
    assert load_session(store, "ses_talk", Limits()).history == full.history
    assert len(full.history["main"]) == 6

    def model(request: ModelRequest) -> object:
        if isinstance(request.messages[-1], ToolResultMessage):
            return "ok"
        return {"tool_calls": [{"id": "call_1", "name": "echo", "arguments": {"n": 2}}]}

    agent = Agent("main", model=FunctionProvider(model))
    resumed = Runtime(
        [agent], store=store, options=RuntimeOptions(tools=[echo]), session_id="ses_talk"
    )
    assert resumed.conversation() == full.history["main"]
    _, events = await run_turn(resumed, "once more")
    (started,) = of(events, ev.ToolStarted)
    assert started.tool_call_id == "call_1_"  # the loaded conversation holds call_1
    live = resumed.conversation()
    resumed.submit(ev_shutdown())

    # Saved item by item now: the checkpoint holds no history value, and loads the same.
    seq, data = store.latest_checkpoint("ses_talk", CHECKPOINT)  # type: ignore[misc]
    assert "history" not in data and seq == store.session("ses_talk").event_count  # type: ignore[union-attr]
    assert load_session(store, "ses_talk", Limits()).history == {"main": live}
    refolded = load_session(NoCheckpoints(store), "ses_talk", Limits())  # type: ignore[arg-type]
    assert refolded.history == {"main": live}
    store.close()


def ev_shutdown() -> Any:
    from moot.protocol import ops

    return ops.Shutdown()
