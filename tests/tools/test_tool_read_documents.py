"""`read` of a PDF gives its pages as a document (with their text), `pages` at a time; of an
image, the image with its size, downscaled when larger than a model reads; of a damaged image or
a locked PDF, one clear error. MCP images and embedded PDFs reach the model as attachments."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest

from moot.mcp.results import render_blocks
from moot.tools.read import read_tool
from moot.workspace import Workspace
from pdf_files import locked_pdf, pdf, photo, screenshot


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def test_a_pdf_comes_back_as_its_first_pages_and_says_how_to_read_on(ws: Workspace) -> None:
    (ws.root / "spec.pdf").write_bytes(pdf(25))
    result = read_tool(ws)(path="spec.pdf")
    assert result.content == "spec.pdf: PDF, pages 1-20 of 25; read on with pages=21-"
    (document,) = result.attachments
    assert document.mime_type == "application/pdf" and document.name == "spec.pdf"
    assert document.text is not None and "page 20" in document.text

    rest = read_tool(ws)(path="spec.pdf", pages="21-")
    assert rest.content == "spec.pdf: PDF, pages 21-25 of 25"
    from pypdf import PdfReader

    (part,) = rest.attachments
    assert len(PdfReader(io.BytesIO(base64.b64decode(part.data))).pages) == 5


def test_a_locked_or_damaged_file_is_one_clear_error(ws: Workspace) -> None:
    (ws.root / "locked.pdf").write_bytes(locked_pdf())
    (ws.root / "cut.png").write_bytes(screenshot(200, 100)[:300])
    locked = read_tool(ws)(path="locked.pdf")
    assert locked.is_error and locked.content.startswith("locked.pdf is a password-protected PDF")
    cut = read_tool(ws)(path="cut.png")
    assert cut.is_error and cut.content.startswith("cut.png is a damaged PNG image")
    assert not locked.attachments and not cut.attachments


def test_an_image_says_its_size_and_a_large_one_is_downscaled(ws: Workspace) -> None:
    (ws.root / "shot.png").write_bytes(screenshot(800, 600))
    (ws.root / "photo.jpg").write_bytes(photo(4000, 3000))
    shot = read_tool(ws)(path="shot.png")
    assert shot.content.startswith("shot.png: image/png, 800x600, ")
    big = read_tool(ws)(path="photo.jpg")
    assert big.content.startswith("photo.jpg: image/jpeg, 2000x1500, ")
    assert big.content.endswith(", downscaled to fit")
    (image,) = big.attachments
    assert (image.width, image.height) == (2000, 1500)


def test_mcp_images_and_embedded_pdfs_become_attachments() -> None:
    from mcp.types import BlobResourceContents, EmbeddedResource, ImageContent, TextContent

    png = base64.b64encode(screenshot(4, 4)).decode()
    spec = base64.b64encode(pdf(1)).decode()
    rendered = render_blocks(
        [
            TextContent(type="text", text="two things"),
            ImageContent(type="image", data=png, mime_type="image/png"),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///spec.pdf", mime_type="application/pdf", blob=spec
                ),
            ),
        ]
    )
    assert rendered.text() == "two things"
    assert rendered.images == [("image/png", png), ("application/pdf", spec)]
