"""The same agent called three times at once: each call has its own id; `format_trace` shows
the tree of who called whom, with each result.

Run: python examples/peers/tracing.py
"""

from moot import Agent, ScriptedProvider, format_trace, run


def ask(topic: str) -> dict:
    return {"name": "call_agent", "arguments": {"agent_name": "researcher", "message": topic}}


models = ScriptedProvider(
    agents={
        "lead": [
            {"tool_calls": [ask("chips"), ask("models"), ask("policy")]},
            "Summary of three findings.",
        ],
        "researcher": ["finding 1", "finding 2", "finding 3"],
    }
)
lead = Agent("lead", model=models)
researcher = Agent("researcher", role="Research expert", model=models)
result = run("Research AI trends", [lead, researcher])
print(format_trace(result))
for event in result.events:
    if event.kind == "agent_called" and event.agent == "researcher":
        print(f"call_id={event.call_id}: {event.message}")
