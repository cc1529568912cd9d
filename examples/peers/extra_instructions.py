"""Extra instructions at run time: for the agents the person addresses, or for every agent.

Run: python examples/peers/extra_instructions.py
"""

from moot import Agent, FunctionProvider, run

SOUL = "Write in a calm, plain voice."


def model(request):
    has_soul = "ADDITIONAL INSTRUCTIONS:" in request.system
    if request.agent == "writer" and len(request.messages) == 1:
        call = {"agent_name": "researcher", "message": "facts please"}
        return {"tool_calls": [{"name": "call_agent", "arguments": call}]}
    if request.agent == "writer":
        return f"writer soul={has_soul}; {request.messages[-1].content}"
    return f"researcher soul={has_soul}"


writer = Agent("writer", model=FunctionProvider(model))
researcher = Agent("researcher", model=FunctionProvider(model))
for scope in ("entry", "all"):
    result = run(
        "Write an article about AI.",
        starting_agents=[writer],
        run_agents=[writer, researcher],
        extra_instructions=SOUL,
        extra_instructions_scope=scope,
    )
    print(scope, "->", result.output)
