"""Disable built-in peer tools, or replace one (here `finish`) with a tool of the same name.

Run: python examples/peers/tool_overrides.py
"""

from moot import Agent, ScriptedProvider, run, tool


@tool
def finish(message: str, confidence: float = 1.0) -> str:
    """Return the result with a confidence score."""
    return f"[{confidence}] {message}"


researcher = Agent(
    "researcher",
    model=ScriptedProvider(
        [
            {
                "tool_calls": [
                    {
                        "name": "finish",
                        "arguments": {"message": "Analysis complete", "confidence": 0.85},
                    }
                ]
            }
        ]
    ),
)
result = run(
    "Analyze this data.",
    starting_agents=[researcher],
    tools=[finish],  # replaces the built-in finish
    allow_background_agents=True,
    disabled_tools={"spawn_background_agent", "get_messages"},
)
print(result.output)
