"""Continue a conversation: the same store and session, a second run that builds on the first.

Run: python examples/peers/history.py
"""

from moot import Agent, FunctionProvider, run
from moot.protocol.messages import UserMessage
from moot.store.memory import MemoryStore


def model(request):
    asked = [m.content for m in request.messages if isinstance(m, UserMessage)]
    return f"I have seen {len(asked)} requests: {asked}"


researcher = Agent("researcher", model=FunctionProvider(model))
store = MemoryStore()
first = run("Research AI trends.", [researcher], store=store)
second = run("Write about what you found.", [researcher], store=store, session_id=first.session_id)
print(second.output)
