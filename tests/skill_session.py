"""Sessions with files (skills, commands, agents, memory) against the local model server, in
process, so a test can read every request the model got (not a test module)."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_server import ModelServer
from moot.client.local import LocalClient, SessionOptions, open_client
from moot.protocol import events as ev
from moot.protocol import ops

MODEL = "anthropic/claude-haiku-4-5"


def point_at(server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("MOOT_SANDBOX", "none")


def open_session(cwd: Path, **fields: object) -> LocalClient:
    options = {"cwd": cwd, "model": MODEL, "can_ask": False, **fields}
    return open_client(SessionOptions(**options))  # type: ignore[arg-type]


async def run(client: LocalClient, op: ops.Op) -> list[ev.Event]:
    """Submit `op` and take the events it causes, up to `turn_finished` (or its refusal)."""
    events = client.subscribe()
    submission = client.submit(op)
    seen: list[ev.Event] = []
    async for event in events:
        seen.append(event)
        if isinstance(event, ev.TurnFinished) or (
            isinstance(event, ev.OpRefused | ev.MemoryNoted) and event.submission_id == submission
        ):
            break
    events.close()
    return seen


def system_of(body: dict) -> str:
    """The system prompt of an Anthropic request body, as text."""
    system = body.get("system", "")
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system)
    return system


def text_of(message: dict) -> str:
    """The text of one message, tool results included."""
    content = message["content"]
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            inner = block.get("content", "")
            parts.append(
                inner if isinstance(inner, str) else "".join(b.get("text", "") for b in inner)
            )
    return "".join(parts)
