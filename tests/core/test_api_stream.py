"""`moot.stream(...)` from plain code and from a coroutine: `for` and `async for` see the same
events, and leaving either loop early interrupts the run; the README's Python runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import moot
from moot import Agent, ScriptedProvider
from moot.protocol import events as ev
from moot.protocol.states import RunState

README = Path(__file__).parents[2] / "README.md"


def test_a_for_loop_in_plain_code_sees_every_event_of_the_run() -> None:
    agent = Agent("main", model=ScriptedProvider(["Hello."]))

    events = list(moot.stream("hi", agent))

    assert isinstance(events[0], ev.TurnStarted)
    assert isinstance(events[-1], ev.TurnFinished) and events[-1].output == "Hello."
    assert not [t for t in threading.enumerate() if t.name == "moot-stream"]


async def test_an_async_for_in_a_coroutine_sees_the_same_events() -> None:
    agent = Agent("main", model=ScriptedProvider(["Hello."]))

    kinds = [type(e) async for e in moot.stream("hi", agent)]

    assert kinds[0] is ev.TurnStarted and kinds[-1] is ev.TurnFinished


def test_leaving_a_for_loop_early_interrupts_the_run_and_ends_its_thread() -> None:
    agent = Agent("main", model=ScriptedProvider([{"text": "never", "delay": 60}]))

    for event in moot.stream("hi", agent):
        if isinstance(event, ev.TurnStarted):
            break

    assert not [t for t in threading.enumerate() if t.name == "moot-stream"]


def test_closing_an_async_stream_early_ends_it() -> None:
    agent = Agent("main", model=ScriptedProvider([{"text": "never", "delay": 60}]))
    seen: list[ev.Event] = []

    async def early() -> None:
        events = moot.stream("hi", agent)
        async for event in events:
            seen.append(event)
            if isinstance(event, ev.TurnStarted):
                await events.aclose()
                break

    import asyncio

    asyncio.run(early())
    assert isinstance(seen[0], ev.TurnStarted)


def test_the_readmes_python_runs_as_written(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        result = subprocess.run(
            [sys.executable, "-c", block],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, f"{block}\n{result.stderr}"


def test_unpacking_a_stream_gives_the_finished_turn_last() -> None:
    agent = Agent("main", model=ScriptedProvider(["Done."]))

    *_, last = moot.stream("hi", agent)

    assert isinstance(last, ev.TurnFinished) and last.state is RunState.COMPLETED
