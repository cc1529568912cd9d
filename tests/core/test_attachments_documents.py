"""`read` of a PDF through a whole session: a model that reads documents gets the document
block in the tool's result; one that does not gets the pages' text (a real HTTP server)."""

from __future__ import annotations

from pathlib import Path

import pytest

import wire_builders as wire
from model_server import ModelServer, Reply
from moot.client.local import SessionOptions, open_client
from moot.testing import drive_turn
from pdf_files import pdf


def options(workspace: Path, model: str) -> SessionOptions:
    return SessionOptions(
        cwd=workspace, model=model, read_files=False, permission_mode="bypassPermissions"
    )


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "spec.pdf").write_bytes(pdf(3, word="clause"))
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    return root


async def test_a_pdf_read_reaches_claude_as_a_document(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.reply(
            Reply(body=wire.anthropic(call=("read", {"path": "spec.pdf", "pages": "2-3"}), n=1)),
            Reply(body=wire.anthropic("clause 2 says so", n=2)),
        )
        client = open_client(options(workspace, "anthropic/claude-haiku-4-5"))
        outcome = await drive_turn(client, "what does the spec say?")
        await client.close()
    assert outcome.finished.output == "clause 2 says so"
    result = server.requests[1].json["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    text, document = result["content"]
    assert text == {"type": "text", "text": "spec.pdf: PDF, pages 2-3 of 3"}
    assert document["type"] == "document" and document["title"] == "spec.pdf"
    assert document["source"]["media_type"] == "application/pdf"


async def test_a_model_without_documents_gets_the_pages_text(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ModelServer() as server:
        monkeypatch.setenv("DEEPSEEK_API_KEY", "k")
        monkeypatch.setenv("DEEPSEEK_BASE_URL", server.url)
        server.reply(
            Reply(body=wire.openai_chat(call=("read", {"path": "spec.pdf"}), n=1)),
            Reply(body=wire.openai_chat("done", n=2)),
        )
        client = open_client(options(workspace, "deepseek/deepseek-chat"))
        await drive_turn(client, "what does the spec say?")
        await client.close()
    tool = server.requests[1].json["messages"][-1]
    assert tool["role"] == "tool"
    assert tool["content"].startswith("spec.pdf: PDF, pages 1-3 of 3\n")
    assert '<document name="spec.pdf">\n--- page 1 ---\nclause 1' in tool["content"]
    assert "--- page 3 ---\nclause 3\n</document>" in tool["content"]
