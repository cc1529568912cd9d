"""A turn whose tool blocks its worker thread for good, under headless signal handling.

Run as `python signal_worker.py`: it prints each event as JSON, one per line. The first SIGINT
cancels the run, but the interpreter would then wait for the stuck thread forever; the test
shows that a second SIGINT ends the process all the same.
"""

from __future__ import annotations

import asyncio
import threading

from moot.cli.headless import stop_on_signals
from moot.core.agent import Agent
from moot.core.options import RuntimeOptions
from moot.core.runtime import Runtime
from moot.protocol import events as ev
from moot.protocol import ops
from moot.providers.scripted import ScriptedProvider
from moot.store.memory import MemoryStore
from moot.tools.base import SideEffect, tool


@tool(side_effect=SideEffect.READ_ONLY)
def stuck() -> str:
    """Wait for something that never happens, in a worker thread."""
    threading.Event().wait()
    return "never"


async def main() -> None:
    model = ScriptedProvider([{"tool_calls": [{"name": "stuck", "arguments": {}}]}])
    options = RuntimeOptions(tools=[stuck])
    runtime = Runtime([Agent("main", model=model)], store=MemoryStore(), options=options)
    stop_on_signals(runtime)
    events = runtime.events()
    runtime.submit(ops.UserTurn(text="go"))
    async for event in events:
        print(ev.event_to_json(event), flush=True)
        if isinstance(event, ev.TurnFinished):
            break
    await runtime.wait()


if __name__ == "__main__":
    asyncio.run(main())  # after the run, this waits for the stuck thread
