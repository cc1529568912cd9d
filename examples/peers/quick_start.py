"""Three peers get the task at once; the output is their results, tagged by name.

Run: python examples/peers/quick_start.py  (the scripted provider plays the models)
"""

from moot import Agent, ScriptedProvider, run, tool
from moot.tools.base import SideEffect


@tool(side_effect=SideEffect.READ_ONLY)
def search_web(query: str) -> str:
    """Search the web."""
    return f"Results for: {query}"


# One scripted provider plays every model; per-agent scripts say what each one answers.
models = ScriptedProvider(
    agents={
        "researcher": [
            {"tool_calls": [{"name": "search_web", "arguments": {"query": "AI trends"}}]},
            "Agents, small models and long context.",
        ],
        "writer": ["A draft on AI trends."],
        "reviewer": ["Checked: accurate."],
    }
)
researcher = Agent("researcher", role="Research expert", model=models)
writer = Agent("writer", role="Skilled writer", model=models)
reviewer = Agent("reviewer", role="Critical reviewer", model=models)

result = run(
    "Write an AI trends report.",
    starting_agents=[researcher, writer, reviewer],
    tools=[search_web],
)
print(result.output)
