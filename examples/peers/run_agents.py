"""`run_agents` is the pool: who may start and be called. A starting agent outside it cannot
take part, and moot warns.

Run: python examples/peers/run_agents.py
"""

import warnings

from moot import Agent, ScriptedProvider, run

models = ScriptedProvider(agents={"researcher": ["found"], "writer": ["wrote"], "reviewer": ["?"]})
researcher, writer, reviewer = (
    Agent(n, model=models) for n in ("researcher", "writer", "reviewer")
)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    result = run(
        "Research and write about AI trends",
        starting_agents=[researcher, writer, reviewer],
        run_agents=[researcher, writer],  # reviewer is not in the pool
    )
print(result.output)
print("warning:", caught[0].message)
