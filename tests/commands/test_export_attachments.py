"""Exports show attachments: the HTML page inline (`data:` URLs, so it still fetches nothing),
markdown as files beside it that it links to (one per distinct attachment)."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from msgspec.structs import replace

from moot.commands.builtin import builtin_commands
from moot.protocol import events as ev
from moot.protocol import ops
from moot.protocol.messages import Attachment
from pdf_files import pdf, screenshot
from test_commands import Recorder, client_for, turn


async def test_html_shows_images_inline_and_markdown_writes_them_as_files(tmp_path: Path) -> None:
    shot_bytes, spec_bytes = screenshot(40, 30), pdf(1)
    shot = Attachment(mime_type="image/png", data=base64.b64encode(shot_bytes).decode(),
                      name="shot.png", width=40, height=30)  # fmt: skip
    spec = Attachment(mime_type="application/pdf", data=base64.b64encode(spec_bytes).decode(),
                      name="docs/spec.pdf", text="--- page 1 ---\npage 1")  # fmt: skip
    first, second = turn("run_1", "look", "a dot"), turn("run_2", "again", "still a dot")
    script: list[ev.Event] = [
        replace(first[0], attachments=(shot, spec)), *first[1:],
        replace(second[0], attachments=(shot,)), *second[1:],
    ]  # fmt: skip
    client = client_for(str(tmp_path), script=script)
    client.submit(ops.UserTurn(text="look"))
    client.submit(ops.UserTurn(text="again"))
    registry = builtin_commands()
    context = Recorder(client)

    await registry.run(context, "/export html page.html")
    page = (tmp_path / "page.html").read_text()
    sources = re.findall(r'src="([^"]*)"', page)
    assert sources == [f"data:image/png;base64,{shot.data}"] * 2
    assert not re.search(r"<script|<link|<iframe|href=|@import|url\(", page)
    assert "shot.png, image/png, 40x30" in page and "page 1" in page

    await registry.run(context, "/export md notes.md")
    folder = tmp_path / "ses_fake-attachments"
    assert context.last.endswith(f"and 2 attachments to {folder}")
    assert sorted(p.name for p in folder.iterdir()) == ["01-shot.png", "02-spec.pdf"]
    assert (folder / "01-shot.png").read_bytes() == shot_bytes
    assert (folder / "02-spec.pdf").read_bytes() == spec_bytes
    text = (tmp_path / "notes.md").read_text()
    links: list[Any] = re.findall(r"(!?)\[[^\]]*\]\(([^)]*)\)", text)
    assert links == [("!", "ses_fake-attachments/01-shot.png"),
                     ("", "ses_fake-attachments/02-spec.pdf"),
                     ("!", "ses_fake-attachments/01-shot.png")]  # fmt: skip
