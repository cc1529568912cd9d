"""A background run: start it, message its agent while it works, read its status, wait.

Run: python examples/peers/background.py
"""

import asyncio

from moot import Agent, FunctionProvider, run_background


def writer_model(request):
    # The message arrives in get_messages' result, or at the next step if it came later.
    if "[message from user]" in request.messages[-1].content:
        return "Report on AI trends, with a section on GPT-5."
    return {"tool_calls": [{"name": "get_messages", "arguments": {}}]}


async def main() -> None:
    gate = asyncio.Event()

    async def slow_writer(request):
        await gate.wait()  # the agent works until the person has said something
        return writer_model(request)

    writer = Agent("writer", role="Skilled writer", model=FunctionProvider(slow_writer))
    handle = await run_background("Research AI trends", [writer])
    print(handle.send_message("writer", "Add a section about GPT-5."))
    gate.set()
    result = await handle.result()
    print(handle.status())
    print(result.output)


asyncio.run(main())
