"""Messages both ways during a run: the agent asks the person, the person answers.

Run: python examples/peers/on_message.py
"""

from moot import Agent, FunctionProvider, run
from moot.protocol.messages import ToolResultMessage, UserMessage


def writer_model(request):
    last = request.messages[-1]
    if isinstance(last, UserMessage) and "[message from user]" in last.content:
        return f"Final report ({last.content.splitlines()[-1]})"
    if isinstance(last, ToolResultMessage) and last.name == "send_message":
        # Wait (a minute at most) for the answer; the call tree shows "waiting for a message".
        return {"tool_calls": [{"name": "get_messages", "arguments": {"wait_seconds": 60}}]}
    if isinstance(last, ToolResultMessage):
        return "Still waiting for approval."
    return {
        "tool_calls": [
            {"name": "send_message", "arguments": {"task_id": "user", "message": "Need your input"}}
        ]
    }


def on_message(msg, send):
    print(f"[{msg.sender}] {msg.text}")
    if msg.text == "Need your input":
        send("Approved, proceed.")


writer = Agent("writer", role="Skilled writer", model=FunctionProvider(writer_model))
result = run("Write a detailed report.", starting_agents=[writer], on_message=on_message)
print(result.output)
