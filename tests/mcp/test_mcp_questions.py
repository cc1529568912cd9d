"""MCP servers' questions (elicitation) in a session (issue 33): where the front end puts them to
the person (the app, the REPL: `asks_mcp_questions`), a server's `elicitation/create` is an
`mcp_question_asked` event and the `AnswerMcpQuestion` op answers it; elsewhere (`moot -p`, an
editor over ACP) the servers are not told they may ask. server-everything's elicitation tool,
from npm, in its own process (offered only to a client that can answer)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from mcp_helpers import call, script, server, user_servers, wait_for
from mcp_reference import everything, require
from moot.client.local import SessionOptions, open_client
from moot.frontend.mcp_form import form_content, form_fields
from moot.protocol import events as ev
from moot.protocol import ops

pytestmark = pytest.mark.timeout(240)
TRIGGER = "mcp__everything__trigger-elicitation-request"


async def _turn(
    workspace: Path, model: str, action: str, typed: dict[str, str], *, asks: bool
) -> tuple[list[ev.Event], list[str]]:
    """One turn; each question is answered with `action` and, to accept, the fields typed as
    the app and the REPL read them. Returns the events and the tools the session had."""
    options = SessionOptions(
        cwd=workspace, model=model, allowed_tools=("mcp__everything",), asks_mcp_questions=asks
    )
    client = open_client(options)
    events = client.subscribe()
    seen: list[ev.Event] = []
    try:
        await wait_for(client, "everything")
        tools = list(client.status().tools)
        client.submit(ops.UserTurn(text="ask me"))
        async with asyncio.timeout(120):
            async for event in events:
                seen.append(event)
                if isinstance(event, ev.McpQuestionAsked):
                    fields = form_fields(event.schema)
                    answer: Any = form_content(fields, typed) if action == "accept" else None
                    client.submit(ops.AnswerMcpQuestion(event.ask_id, action, answer))  # type: ignore[arg-type]
                if isinstance(event, ev.TurnFinished):
                    break
    finally:
        events.close()
        await client.close()
    return seen, tools


def _finished(events: list[ev.Event]) -> str:
    (done,) = [e for e in events if isinstance(e, ev.ToolFinished)]
    return done.content


async def test_a_servers_question_is_an_event_and_the_op_answers_it(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"everything": everything(require())})
    model = script(tmp_path / "m.json", call(TRIGGER), {"text": "ok"})
    typed = {
        "name": "Ada Lovelace",
        "check": "yes",
        "integer": "7",
        "untitledMultipleSelectEnum": "Piano, Drums",
    }

    events, tools = await _turn(workspace, model, "accept", typed, asks=True)

    assert TRIGGER in tools
    (asked,) = [e for e in events if isinstance(e, ev.McpQuestionAsked)]
    assert asked.server == "everything" and asked.schema["required"] == ["name"]
    done = _finished(events)
    assert "User provided the requested information" in done
    assert "- Name: Ada Lovelace" in done and "- Favorite Integer: 7" in done
    assert "- Agreed to terms: true" in done and '"Piano"' in done, done
    assert '"firstLine": "It was a dark and stormy night."' in done  # a default, left as it was
    (answered,) = [e for e in events if isinstance(e, ev.McpQuestionAnswered)]
    assert (answered.ask_id, answered.action, answered.by) == (asked.ask_id, "accept", "user")

    events, _ = await _turn(workspace, model, "decline", {}, asks=True)
    assert "User declined" in _finished(events)


async def test_where_nobody_answers_the_servers_are_not_told_they_may_ask(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"everything": everything(require())})
    model = script(tmp_path / "m.json", {"text": "ok"})

    events, tools = await _turn(workspace, model, "accept", {}, asks=False)

    assert TRIGGER not in tools and "mcp__everything__echo" in tools
    assert not [e for e in events if isinstance(e, ev.McpQuestionAsked)]


async def test_an_answer_to_no_question_is_refused(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    user_servers(private_moot_home, {"everything": everything(require())})
    model = script(tmp_path / "m.json", {"text": "ok"})
    client = open_client(SessionOptions(cwd=workspace, model=model, asks_mcp_questions=True))
    events = client.subscribe()
    try:
        sent = client.submit(ops.AnswerMcpQuestion(ask_id="ask_nope", action="decline"))
        async with asyncio.timeout(30):
            async for event in events:
                if event.submission_id == sent:
                    break
    finally:
        events.close()
        await client.close()
    assert isinstance(event, ev.OpRefused) and "ask_nope" in event.reason


async def test_a_servers_request_for_the_model_is_approved_answered_and_counted(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    """server-everything's sampling tool: the request is put to the person as a question with
    no fields; accepted, the session's model answers it (a turn of the script), and what it
    spent shows in the session's cost ledger. Declined, the server is told."""
    user_servers(private_moot_home, {"everything": everything(require())})
    trigger = "mcp__everything__trigger-sampling-request"
    model = script(
        tmp_path / "m.json",
        call(trigger, prompt="owls", maxTokens=50),
        {"text": "Owls hunt at dusk.", "usage": {"input_tokens": 30, "output_tokens": 6},
         "cost_usd": 0.25},
        {"text": "done"},
    )  # fmt: skip

    events, tools = await _turn(workspace, model, "accept", {}, asks=True)

    assert trigger in tools
    (asked,) = [e for e in events if isinstance(e, ev.McpQuestionAsked)]
    assert "asks to use the session's model (at most 50 tokens" in asked.message
    assert "owls" in asked.message and asked.schema["properties"] == {}
    done = _finished(events)
    assert "Owls hunt at dusk." in done and '"model":' in done, done
    (sampled,) = [e for e in events if isinstance(e, ev.McpSampled)]
    assert (sampled.server, sampled.usage.output_tokens, sampled.cost_usd) == (
        "everything",
        6,
        0.25,
    )
    client = open_client(SessionOptions(cwd=workspace, model=model, session_id=sampled.session_id))
    try:
        (line,) = client.query.costs(session_id=sampled.session_id)
    finally:
        await client.close()
    assert line.output_tokens >= 6 and line.calls == 3  # two turns and the server's request

    model = script(tmp_path / "n.json", call(trigger, prompt="owls"), {"text": "done"})
    events, _ = await _turn(workspace, model, "decline", {}, asks=True)
    assert "sampling refused" in _finished(events)
    assert not [e for e in events if isinstance(e, ev.McpSampled)]


def test_headless_a_server_asks_the_model_only_where_the_users_settings_allow_it(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    """`moot -p` asks nobody: sampling is offered only to the servers the user's settings name
    in `mcpSamplingAllowed` (a repository's cannot), and their requests run unasked, counted."""
    import subprocess
    import sys

    from moot.store.sqlite import SQLiteStore

    trigger = "mcp__everything__trigger-sampling-request"
    servers = {"everything": everything(require())}

    def run(name: str, **settings: Any) -> list[ev.Event]:
        user_servers(private_moot_home, servers, **settings)
        model = script(
            tmp_path / f"{name}.json",
            call(trigger, prompt="owls", maxTokens=20),
            {"text": "Owls hunt.", "usage": {"input_tokens": 9, "output_tokens": 3}},
            {"text": "done"},
        )
        done = subprocess.run(
            [sys.executable, "-m", "moot.cli", "-p", "go", "--model", model, "--output-format",
             "json", "--allowedTools", "mcp__everything"],
            cwd=workspace, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        import json

        session = json.loads(done.stdout)["session_id"]
        with SQLiteStore(private_moot_home / "data" / "sessions.db") as store:
            return store.events(session)

    allowed = run("allowed", mcpSamplingAllowed=["everything"])
    (sampled,) = [e for e in allowed if isinstance(e, ev.McpSampled)]
    assert sampled.server == "everything" and sampled.usage.output_tokens == 3
    assert "Owls hunt." in _finished(allowed)
    assert not [e for e in allowed if isinstance(e, ev.McpQuestionAsked)]  # nobody was asked

    refused = run("refused")
    assert "Unknown tool" in _finished(refused)  # not offered: the server hides the tool
    assert not [e for e in refused if isinstance(e, ev.McpSampled)]


async def test_a_python_sdk_servers_question_is_asked_too(
    workspace: Path, tmp_path: Path, private_moot_home: Path
) -> None:
    """A server written with the `mcp` Python SDK elicits through the same event and op: the
    client that answers questions speaks the handshake protocol, whose pipe carries a server's
    requests (at the discovered, modern version the SDK refuses them: "no back-channel")."""
    user_servers(private_moot_home, {"py": server("asks")})
    model = script(tmp_path / "m.json", call("mcp__py__ask_name"), {"text": "ok"})
    options = SessionOptions(
        cwd=workspace, model=model, allowed_tools=("mcp__py",), asks_mcp_questions=True
    )
    client = open_client(options)
    events = client.subscribe()
    seen: list[ev.Event] = []
    try:
        await wait_for(client, "py")
        client.submit(ops.UserTurn(text="ask me"))
        async with asyncio.timeout(120):
            async for event in events:
                seen.append(event)
                if isinstance(event, ev.McpQuestionAsked):
                    client.submit(ops.AnswerMcpQuestion(event.ask_id, "accept", {"name": "Ada"}))
                if isinstance(event, ev.TurnFinished):
                    break
    finally:
        events.close()
        await client.close()
    assert [e.server for e in seen if isinstance(e, ev.McpQuestionAsked)] == ["py"]
    assert "hello Ada" in _finished(seen)
