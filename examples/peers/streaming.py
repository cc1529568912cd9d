"""Stream every event of a run, background agents' returns included.

Run: python examples/peers/streaming.py
"""

import asyncio

from moot import Agent, ScriptedProvider, stream

spawn = {
    "name": "spawn_background_agent",
    "arguments": {"agent_name": "researcher", "message": "dig"},
}
models = ScriptedProvider(
    agents={
        "writer": [{"tool_calls": [spawn]}, "Drafting while the research runs.", "Report done."],
        "researcher": ["Three findings."],
    }
)


async def main() -> None:
    writer, researcher = Agent("writer", model=models), Agent("researcher", model=models)
    async for event in stream("Write report", [writer, researcher], allow_background_agents=True):
        if event.kind in ("agent_called", "agent_returned", "messages_delivered", "turn_finished"):
            where = f"call_id={event.call_id} parent={event.parent_call_id}"
            print(f"[{event.kind}] {event.agent} {where}")
        if event.kind == "turn_finished":
            print("Done:", event.output)


asyncio.run(main())
