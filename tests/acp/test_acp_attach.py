"""An editor's images and embedded PDFs (ACP image blocks, blob resources) reach the turn as
the same attachments the app and `moot -p` send."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path

from acp import PROTOCOL_VERSION, text_block
from acp.schema import (
    BlobResourceContents,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
)

from images import png
from moot.acp.session import prompt_text
from pdf_files import pdf
from test_acp import Editor, agent, scripted, workspace  # noqa: F401 (the fixture)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_image_blocks_and_blob_resources_become_attachments() -> None:
    blocks = [
        text_block("what is wrong here?"),
        ImageContentBlock(
            type="image", mime_type="image/png", data=_b64(png()), uri="file:///w/shot.png"
        ),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///w/docs/spec.pdf", mime_type="application/pdf", blob=_b64(pdf())
            ),
        ),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///w/app.bin", mime_type="application/octet-stream", blob="AAAA"
            ),
        ),
    ]
    text, attachments = prompt_text(blocks)
    assert [(a.mime_type, a.name) for a in attachments] == [
        ("image/png", "shot.png"),
        ("application/pdf", "spec.pdf"),
    ]
    assert base64.b64decode(attachments[1].data) == pdf()
    assert text == (
        "what is wrong here?\n\n[/w/app.bin: a binary file (application/octet-stream), not sent]"
    )


async def test_an_editors_pdf_is_recorded_with_the_turn(workspace: Path, tmp_path: Path) -> None:  # noqa: F811
    model = scripted(tmp_path / "m.json", {"text": "Read it."})
    editor = Editor()
    async with agent(workspace, editor, model) as conn:
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        spec = EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri=f"file://{workspace}/spec.pdf", mime_type="application/pdf", blob=_b64(pdf(4))
            ),
        )
        done = await conn.prompt(session_id=new.session_id, prompt=[text_block("summarise"), spec])
        assert done.stop_reason == "end_turn"
    export = [sys.executable, "-m", "moot.cli", "sessions", "export", new.session_id]
    exported = await asyncio.create_subprocess_exec(
        *export, "--format", "json", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(exported.communicate(), 60)
    (started,) = [e for e in json.loads(out)["events"] if e["kind"] == "turn_started"]
    assert started["prompt"] == "summarise"
    ((attachment),) = started["attachments"]
    assert (attachment["mime_type"], attachment["name"]) == ("application/pdf", "spec.pdf")
    assert base64.b64decode(attachment["data"]) == pdf(4)
