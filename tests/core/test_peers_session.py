"""A session's settings turn background agents on (`allowBackgroundAgents`); off by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_server import ModelServer, Reply
from moot.protocol import ops
from skill_session import open_session, point_at, run
from wire_builders import anthropic


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with ModelServer() as running:
        point_at(running, monkeypatch)
        yield running


@pytest.mark.parametrize("allowed", [True, False])
async def test_the_settings_offer_background_agents_to_the_model(
    allowed: bool, server: ModelServer, tmp_path: Path
) -> None:
    (tmp_path / ".moot").mkdir()
    settings = {"allowBackgroundAgents": True} if allowed else {}
    (tmp_path / ".moot" / "settings.json").write_text(json.dumps(settings))
    server.reply(Reply(body=anthropic("done", n=1)))
    client = open_session(tmp_path)
    try:
        events = await run(client, ops.UserTurn(text="hi"))
    finally:
        await client.close()
    assert events[-1].stop_reason == "completed"  # type: ignore[union-attr]
    (request,) = server.requests
    names = {t["name"] for t in request.json["tools"]}
    assert ("spawn_background_agent" in names) is allowed
    # moot's peers (the shipped agent definitions) make messages worth offering either way.
    assert {"send_message", "get_messages"} <= names
