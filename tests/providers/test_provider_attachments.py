"""Images and PDFs reach every wire API in its own format: the request bodies a real HTTP
server on 127.0.0.1 received, for the person's message and for a tool's result."""

from __future__ import annotations

from typing import Any

import wire_builders as wire
from model_server import ModelServer, Reply
from moot.protocol.messages import (
    AssistantMessage,
    Attachment,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from moot.providers.anthropic import AnthropicProvider
from moot.providers.base import ModelRequest
from moot.providers.catalog import CatalogEntry
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.gemini import GeminiProvider
from moot.providers.openai_chat import OpenAIChatProvider
from moot.providers.openai_responses import OpenAIResponsesProvider

PNG = Attachment(mime_type="image/png", data="iVBORw0KGgo=", name="shot.png")
PDF = Attachment(
    mime_type="application/pdf", data="JVBERi0xLjQK", name="spec.pdf", text="The spec says 42."
)
SHOT = "iVBORw0KGgo="
PDF_URL = f"data:application/pdf;base64,{PDF.data}"
MESSAGES = (
    UserMessage(content="What do these say?", attachments=(PNG, PDF)),
    AssistantMessage(tool_calls=(ToolCall(id="call_1", name="read", arguments={"path": "a.png"}),)),
    ToolResultMessage(
        tool_call_id="call_1", name="read", content="a.png: image/png", attachments=(PNG,)
    ),
)
REQUEST = ModelRequest(model="x", system="sys", messages=MESSAGES)


async def sent(server: ModelServer, provider: Any, answer: bytes) -> dict[str, Any]:
    server.reply(Reply(body=answer))
    async for _ in provider.stream(REQUEST):
        pass
    return server.requests[-1].json


def config(provider: str, model: str, url: str, **changes: Any) -> ProviderConfig:
    return ProviderConfig(
        provider, model, base_url=url, api_key="k", retry=RetryPolicy(base_delay=0.01), **changes
    )


async def test_anthropic_sends_image_and_document_blocks(server: ModelServer) -> None:
    provider = AnthropicProvider(config("anthropic", "claude-sonnet-4-5", server.url))
    body = await sent(server, provider, wire.anthropic("ok"))
    user, _, result = body["messages"]
    source = {"type": "base64", "media_type": "image/png", "data": SHOT}
    pdf = {"type": "base64", "media_type": "application/pdf", "data": PDF.data}
    assert user["content"][:2] == [
        {"type": "image", "source": source},
        {"type": "document", "source": pdf, "title": "spec.pdf"},
    ]
    assert result["content"][0]["content"][-1] == {"type": "image", "source": source}


async def test_openai_chat_sends_image_url_parts_and_a_pdf_as_a_file_part(
    server: ModelServer,
) -> None:
    provider = OpenAIChatProvider(config("openai-chat", "gpt-4.1", server.url))
    body = await sent(server, provider, wire.openai_chat("ok"))
    user = body["messages"][1]
    assert user["content"][1:] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{SHOT}"}},
        {
            "type": "file",
            "file": {
                "filename": "spec.pdf",
                "file_data": f"data:application/pdf;base64,{PDF.data}",
            },
        },
    ]
    trailing = body["messages"][-1]
    assert trailing["role"] == "user"
    assert trailing["content"][-1]["image_url"]["url"] == f"data:image/png;base64,{SHOT}"


async def test_openai_chat_sends_a_pdfs_text_to_a_model_that_takes_no_documents(
    server: ModelServer,
) -> None:
    models = {"openai-chat/pixtral": CatalogEntry(images=True, documents=False)}
    provider = OpenAIChatProvider(config("openai-chat", "pixtral", server.url, catalog=models))
    body = await sent(server, provider, wire.openai_chat("ok"))
    user = body["messages"][1]
    assert user["content"][0]["text"] == (
        'What do these say?\n<document name="spec.pdf">\nThe spec says 42.\n</document>'
    )
    assert [p["type"] for p in user["content"]] == ["text", "image_url"]


async def test_openai_responses_sends_input_image_and_input_file(server: ModelServer) -> None:
    provider = OpenAIResponsesProvider(config("openai", "gpt-5", server.url))
    body = await sent(server, provider, wire.openai_responses("ok"))
    user = body["input"][0]
    assert user["content"] == [
        {"type": "input_text", "text": "What do these say?"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{SHOT}"},
        {
            "type": "input_file",
            "filename": "spec.pdf",
            "file_data": f"data:application/pdf;base64,{PDF.data}",
        },
    ]
    assert body["input"][-1]["content"][-1] == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{SHOT}",
    }


async def test_gemini_sends_inline_data(server: ModelServer) -> None:
    provider = GeminiProvider(config("gemini", "gemini-2.5-flash", server.url))
    body = await sent(server, provider, wire.gemini("ok"))
    user = body["contents"][0]
    assert user["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": SHOT}},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF.data}},
        {"text": "What do these say?"},
    ]
    assert body["contents"][-1]["parts"][-1] == {
        "inlineData": {"mimeType": "image/png", "data": SHOT}
    }
