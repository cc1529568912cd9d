"""A picture of the app with images in a message (pytest-textual-snapshot; `pytest
--snapshot-update` writes it). The docstring says what a reviewer should see."""

from __future__ import annotations

import base64

from textual.pilot import Pilot

from images import pdf, png
from moot.protocol import events as ev
from moot.protocol.messages import Attachment
from moot.testing import FakeClient
from tui_apps import app_for, shown
from tui_scripts import Run


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_message_with_an_image_and_a_pdf(snap_compare) -> None:
    """The person's message shows its two chips in its text and, under it, one dim line for
    each attachment: `[image 1: shot.png 1280x720, 4.7 KB]` and `[pdf 2: spec.pdf 3 pages,
    ...]`; the answer follows. The prompt below holds a chip being typed: `[image 1: a.png
    3x2]`."""
    run = Run()
    shot = Attachment(mime_type="image/png", data=_b64(png(1280, 720)), name="shot.png")
    spec = Attachment(mime_type="application/pdf", data=_b64(pdf(3)), name="spec.pdf")
    prompt = "what differs? [image 1: shot.png 1280x720] [pdf 2: spec.pdf 3 pages]"
    started = ev.TurnStarted(**run._ids(), prompt=prompt, attachments=(shot, spec))
    script = run.add(started).text("The header.").finish("The header.").events
    app = app_for(FakeClient(script))

    async def run_before(pilot: Pilot) -> None:
        await pilot.press(*"what differs?", "enter")
        await shown(pilot)
        pilot.app.prompt.load_text("[image 1: a.png 3x2] ")  # type: ignore[attr-defined]
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)
