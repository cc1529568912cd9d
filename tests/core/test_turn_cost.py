"""A turn's work does not grow with the session (issue 31): the same Python calls at the 10th
turn as at the 70th, with a model the catalog bounds (so the request is checked against the
context window and the compaction threshold) that takes images or not, a tool called each
turn, and an image in the first prompt. A walk of the conversation in Python (weighing each
message, leaving images out of a copy) adds calls per message, so the count grows; what the
checkpoint writes is held by `test_checkpoints.py`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import ops
from moot.protocol.messages import Attachment, ToolResultMessage
from moot.providers.base import ModelRequest, estimate_tokens
from moot.providers.catalog import ModelInfo
from moot.providers.scripted import FunctionProvider
from moot.store.sqlite import SQLiteStore
from moot.tools import tool
from moot.tools.base import SideEffect

TURNS = 70
WINDOW = 10
"""Turns whose fewest calls are compared, at the start and at the end."""


@tool(side_effect=SideEffect.READ_ONLY)
def echo(n: int) -> int:
    """Return n."""
    return n


class Bounded(FunctionProvider):
    """A function model the catalog bounds: a context window, images or not."""

    def __init__(self, images: bool) -> None:
        super().__init__(self.answer, name="bounded")
        self.images = images
        self.weighed: list[tuple[int, int]] = []
        """(what the request says it weighs, a walk of its messages), each request."""

    def model_info(self) -> ModelInfo:
        return ModelInfo(name="test/bounded", context_window=10**9, images=self.images)

    def answer(self, request: ModelRequest) -> object:
        self.weighed.append((estimate_tokens(request), estimate_tokens(_as_tuple(request))))
        if isinstance(request.messages[-1], ToolResultMessage):
            return "ok"
        call = {"id": f"t{len(request.messages)}", "name": "echo", "arguments": {"n": 1}}
        return {"tool_calls": [call]}


def _as_tuple(request: ModelRequest) -> ModelRequest:
    from msgspec.structs import replace

    return replace(request, messages=tuple(request.messages))


def session(model: Bounded, store: SQLiteStore, session_id: str | None = None) -> Runtime:
    return Runtime(
        [Agent("main", model=model)],
        store=store,
        options=RuntimeOptions(tools=[echo]),
        session_id=session_id,
    )


async def calls_per_turn(runtime: Runtime, turns: int = TURNS) -> list[int]:
    """Play `turns` turns; the Python calls (and calls into C) each made, from its submit to
    its end. The model's own function is left out: it walks the request to check it."""
    counts = []
    for n in range(turns):
        image = Attachment(mime_type="image/png", data="aGk=")
        attachments = (image,) if n == 0 else ()
        calls = 0
        inside_model = 0

        def count(frame: FrameType, event: str, arg: Any) -> None:
            nonlocal calls, inside_model
            if event == "call" and frame.f_code is Bounded.answer.__code__:
                inside_model += 1
            elif event == "return" and frame.f_code is Bounded.answer.__code__:
                inside_model -= 1
            elif event in ("call", "c_call") and not inside_model:
                calls += 1

        sys.setprofile(count)
        try:
            runtime.submit(ops.UserTurn(text=f"step {n:03}", attachments=attachments))
            finished = await runtime.wait()
        finally:
            sys.setprofile(None)
        assert finished is not None and finished.state == "completed"
        counts.append(calls)
    return counts


@pytest.mark.parametrize("images", [True, False], ids=["images", "text-only"])
async def test_a_turns_work_is_the_same_at_the_70th_turn_as_at_the_10th(
    tmp_path: Path, images: bool
) -> None:
    model = Bounded(images)
    runtime = session(model, SQLiteStore(tmp_path / "s.db"))
    counts = await calls_per_turn(runtime)
    runtime.submit(ops.Shutdown())
    early, late = counts[WINDOW : 2 * WINDOW], counts[-WINDOW:]
    # The fewest of each window: a turn now and then does some bounded work of its own (the
    # store's periodic checkpoint of its -wal file, a collection).
    assert min(late) == min(early), counts
    # Weighed without a walk, and the same as a walk would weigh.
    assert all(told == walked for told, walked in model.weighed)
    assert len(runtime.conversation()) == 4 * TURNS


async def test_a_resumed_sessions_turns_do_the_same_work_as_it_grows(tmp_path: Path) -> None:
    """Loaded from its checkpoint, the conversation is weighed and indexed once, at the first
    turn; from then on a turn's work is the same however long the session grows."""
    model = Bounded(images=False)
    first = session(model, SQLiteStore(tmp_path / "s.db"))
    await calls_per_turn(first, turns=20)
    first.submit(ops.Shutdown())
    resumed = session(model, SQLiteStore(tmp_path / "s.db"), first.session_id)
    counts = await calls_per_turn(resumed)
    resumed.submit(ops.Shutdown())
    assert min(counts[-WINDOW:]) == min(counts[WINDOW : 2 * WINDOW]), counts
    assert all(told == walked for told, walked in model.weighed)
