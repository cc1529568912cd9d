"""Servers' requests for the session's model (MCP `sampling/createMessage`), from moot's side.

A server may ask the client's model to write something (a summary, a classification). moot
offers it only where the person answers servers' questions (`PersonAsks`: the app, the REPL):
each request is first put to the person as a question with no fields (what the server asks,
and how many tokens), and only an accepted one goes to the session's model, as the session's
first agent has it now; what it spent is recorded (`mcp_sampled`) and counted in the session's
cost ledger. Elsewhere (`moot -p`, an editor over ACP, the SDK) sampling is not advertised.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from moot.protocol import events as ev
from moot.protocol.messages import Usage

Ask = Callable[[str, str, dict[str, Any]], Awaitable[tuple[str, dict[str, Any] | None]]]
"""Puts a question to the person (`moot.mcp.questions.PersonAsks`)."""
Sampler = Callable[[str, list[list[str]], int], Awaitable[tuple[str, str, Usage, float]]]
"""Asks the session's model: (system prompt, `[role, text]` messages, most tokens) -> (its
text, the model's name, the usage, the cost)."""

SHOWN_CHARS = 1200
"""How much of the server's last message the person is shown before approving."""
NO_FIELDS: dict[str, Any] = {"type": "object", "properties": {}}


async def sample(
    ask: Ask,
    record: Callable[[ev.Event], object],
    sampler: Sampler,
    server: str,
    request: dict[str, Any],
) -> tuple[str, dict[str, Any] | None]:
    """Answer a server's `request` (`wire.Elicit.sampling`): the person approves (`ask`), then
    the model writes (`sampler`), and what it spent is recorded (`record`). Returns the action
    and, for `accept`, `{"text", "model"}`; a refusal or a failure carries `{"error"}` for the
    server."""
    system = str(request.get("system") or "")
    messages = [[str(role), str(text)] for role, text in request.get("messages") or ()]
    most = int(request.get("max_tokens") or 1000)
    action, _ = await ask(server, approval_message(server, system, messages, most), NO_FIELDS)
    if action != "accept":
        return action, None
    try:
        text, model, usage, cost = await sampler(system, messages, most)
    except Exception as exc:  # the model failed: the server is told, the session goes on
        return "decline", {"error": f"the model failed: {exc}"}
    record(ev.McpSampled(server=server, model=model, usage=usage, cost_usd=cost))
    return "accept", {"text": text, "model": model}


def approval_message(server: str, system: str, messages: list[list[str]], most: int) -> str:
    """What the person reads before letting the server use the model."""
    last = messages[-1][1] if messages else ""
    shown = last if len(last) <= SHOWN_CHARS else last[:SHOWN_CHARS] + "…"
    lines = [
        f"MCP server {server} asks to use the session's model (at most {most} tokens,"
        " counted in this session's cost). Accept lets it; decline refuses.",
        "",
        shown,
    ]
    if system:
        lines += ["", f"(its instructions: {system[:300]})"]
    if len(messages) > 1:
        lines += ["", f"({len(messages) - 1} earlier message(s) go with it)"]
    return "\n".join(lines)
