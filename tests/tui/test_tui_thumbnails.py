"""Thumbnails in the app (`ui.imageThumbnails`, off by default): under each image line of a
message, the picture in half cells (`▀`: the upper pixel's colour on the lower's), which any
terminal with colours shows; a PDF gets none."""

from __future__ import annotations

import base64
import io

from textual.content import Content
from textual.pilot import Pilot

from moot.frontend.history import PromptHistory
from moot.protocol import events as ev
from moot.protocol.messages import Attachment
from moot.testing import FakeClient
from moot.tui.app import MootApp
from moot.tui.options import AppOptions
from moot.tui.widgets.blocks import UserBlock
from pdf_files import pdf
from tui_apps import shown
from tui_scripts import Run

RED, BLUE = (255, 0, 0), (0, 0, 255)


def _flag(width: int = 48, height: int = 24) -> Attachment:
    """A PNG: the left half red, the right half blue."""
    from PIL import Image

    picture = Image.new("RGB", (width, height), RED)
    picture.paste(BLUE, (width // 2, 0, width, height))
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return Attachment(
        mime_type="image/png", data=base64.b64encode(out.getvalue()).decode(), name="flag.png"
    )


def _app(thumbnails: bool, *attachments: Attachment) -> MootApp:
    run = Run()
    started = ev.TurnStarted(**run._ids(), prompt="what is this?", attachments=attachments)
    script = run.add(started).text("A flag.").finish("A flag.").events
    options = AppOptions(history=PromptHistory(None), thumbnails=thumbnails)
    return MootApp(FakeClient(script), options)  # type: ignore[arg-type]


async def _shown(app: MootApp, pilot: Pilot) -> Content:
    await pilot.press(*"what is this?", "enter")
    for _ in range(100):  # bounded: the bridge takes the events in its own time
        if app.query(UserBlock):
            break
        await pilot.pause()
    (block,) = app.query(UserBlock)
    shown = block.render()
    assert isinstance(shown, Content)
    return shown


async def test_with_thumbnails_on_an_image_line_has_its_picture_under_it() -> None:
    app = _app(True, _flag(), Attachment(mime_type="application/pdf", data="", name="s.pdf"))
    async with app.run_test(size=(100, 30)) as pilot:
        shown = await _shown(app, pilot)
    lines = shown.plain.split("\n")
    at = next(n for n, line in enumerate(lines) if line.startswith("[image 1: flag.png 48x24"))
    picture = lines[at + 1 : at + 7]  # 24 columns of a 2:1 image: 6 rows of cells
    assert picture == ["▀" * 24] * 6
    assert lines[at + 7].startswith("[pdf 2: s.pdf")  # a PDF: its line only
    colours = {
        (span.style.foreground.rgb, span.style.background.rgb)
        for span in shown.spans
        if not isinstance(span.style, str)
        and span.style.background is not None
        and span.style.foreground is not None
    }
    assert colours == {(RED, RED), (BLUE, BLUE)}


async def test_thumbnails_are_off_by_default() -> None:
    assert AppOptions().thumbnails is False
    app = _app(False, _flag())
    async with app.run_test(size=(100, 30)) as pilot:
        shown = await _shown(app, pilot)
    assert "▀" not in shown.plain


def test_a_message_with_a_thumbnail(snap_compare) -> None:
    """The person's message, then its line `[image 1: flag.png 48x24, ...]` and under it a
    picture 24 cells wide and 6 high: red on the left, blue on the right; then the PDF's line
    `[pdf 2: spec.pdf 1 page, ...]` with no picture; the answer follows."""
    spec = Attachment(
        mime_type="application/pdf", data=base64.b64encode(pdf(1)).decode(), name="spec.pdf"
    )
    app = _app(True, _flag(), spec)

    async def run_before(pilot: Pilot) -> None:
        await pilot.press(*"what is this?", "enter")
        await shown(pilot)

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)
