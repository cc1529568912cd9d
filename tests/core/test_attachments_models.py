"""Images against the models' limits: larger than an API takes, downscaled in the request a
real server receives; to a model without vision, refused before anything is sent, naming the
image and the models that would take it; their tokens counted in `/context`."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import pytest

import wire_builders as wire
from model_server import ModelServer, Reply
from moot.client.local import SessionOptions, open_client
from moot.image_header import image_size
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Attachment, UserMessage
from moot.providers.anthropic import AnthropicProvider
from moot.providers.base import ModelRequest
from moot.providers.config import ProviderConfig, RetryPolicy
from moot.providers.gemini import GeminiProvider
from moot.providers.images import LIMITS, image_tokens
from moot.testing import drive_turn


def noise_png(width: int, height: int) -> bytes:
    from PIL import Image

    image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=1)
    return out.getvalue()


async def ask(server: ModelServer, provider: object, attachment: Attachment, answer: bytes) -> dict:
    server.reply(Reply(body=answer))
    request = ModelRequest(
        model="m", system="", messages=(UserMessage(content="look", attachments=(attachment,)),)
    )
    async for _ in provider.stream(request):  # type: ignore[attr-defined]
        pass
    return server.requests[-1].json


async def test_an_image_too_large_for_anthropic_is_re_encoded_to_fit(
    server: ModelServer,
) -> None:
    raw = noise_png(1800, 1350)  # ~7 MB of noise: past the Messages API's 5 MB an image
    assert len(raw) > LIMITS["anthropic"].max_bytes
    shot = Attachment(mime_type="image/png", data=base64.b64encode(raw).decode(), name="a.png")
    config = ProviderConfig("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key="k",
                            retry=RetryPolicy(base_delay=0.01))  # fmt: skip
    body = await ask(server, AnthropicProvider(config), shot, wire.anthropic("ok"))
    source = body["messages"][0]["content"][0]["source"]
    sent = base64.b64decode(source["data"])
    assert len(sent) <= LIMITS["anthropic"].max_bytes
    width, height = image_size(sent) or (0, 0)
    assert abs(width / height - 1800 / 1350) < 0.01
    # A screenshot too large as PNG goes as JPEG first, smaller only if that is too large.
    assert source["media_type"] == "image/jpeg" and sent[:3] == b"\xff\xd8\xff"


async def test_an_image_wider_than_gemini_takes_is_narrowed(server: ModelServer) -> None:
    raw = noise_png(4000, 40)
    shot = Attachment(mime_type="image/png", data=base64.b64encode(raw).decode())
    config = ProviderConfig("gemini", "gemini-2.5-flash", base_url=server.url, api_key="k",
                            retry=RetryPolicy(base_delay=0.01))  # fmt: skip
    body = await ask(server, GeminiProvider(config), shot, wire.gemini("ok"))
    sent = base64.b64decode(body["contents"][0]["parts"][0]["inlineData"]["data"])
    assert image_size(sent) == (LIMITS["gemini"].max_edge, 31)


async def test_an_image_for_a_model_without_vision_is_refused_before_sending(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    monkeypatch.setenv("DEEPSEEK_BASE_URL", server.url)
    server.reply(Reply(body=wire.openai_chat("hello")))
    client = open_client(
        SessionOptions(cwd=tmp_path, model="deepseek/deepseek-chat", read_files=False)
    )
    watch = client.subscribe()
    shot = Attachment(mime_type="image/png", data=base64.b64encode(noise_png(8, 8)).decode(),
                      name="shot.png")  # fmt: skip
    submission = client.submit(ops.UserTurn(text="what is this?", attachments=(shot,)))
    refused = None
    async for event in watch:
        if isinstance(event, ev.OpRefused):
            refused = event
            break
    watch.close()
    assert refused is not None and refused.submission_id == submission
    assert refused.reason.startswith("shot.png was not sent: deepseek/deepseek-chat does not")
    assert "anthropic/claude-sonnet-4-5" in refused.reason
    assert server.requests == []
    # The same text without the image goes.
    outcome = await drive_turn(client, "what is this?")
    await client.close()
    assert outcome.finished.output == "hello"


async def test_context_counts_the_images_tokens(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.reply(Reply(body=wire.anthropic("ok")))
    client = open_client(
        SessionOptions(cwd=tmp_path, model="anthropic/claude-haiku-4-5", read_files=False)
    )
    data = base64.b64encode(noise_png(1280, 720)).decode()
    shot = Attachment(mime_type="image/png", data=data, width=1280, height=720)
    await drive_turn(client, "look", attachments=[shot])
    parts = {p.name: p for p in client.context().parts}
    await client.close()
    part = parts["images and documents"]
    assert part.tokens == image_tokens(1280, 720) == 1229
    assert part.detail == "1 images, 0 documents"
    assert parts["messages"].tokens < 50
