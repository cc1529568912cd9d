"""An editor's image blocks and embedded images and PDFs reach the session as attachments,
checked and fitted as any attachment is; a damaged one is refused with a message."""

from __future__ import annotations

import base64

import pytest

from moot.acp.session import prompt_text
from moot.client.attachments import AttachmentError
from pdf_files import pdf, screenshot


def test_image_and_embedded_pdf_blocks_become_attachments() -> None:
    from acp.schema import (
        BlobResourceContents,
        EmbeddedResourceContentBlock,
        ImageContentBlock,
        TextContentBlock,
    )

    png = base64.b64encode(screenshot(320, 200)).decode()
    spec = base64.b64encode(pdf(2)).decode()
    blocks = [
        TextContentBlock(type="text", text="what is wrong here?"),
        ImageContentBlock(type="image", data=png, mime_type="image/png"),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=BlobResourceContents(
                uri="file:///w/spec.pdf", blob=spec, mime_type="application/pdf"
            ),
        ),
    ]
    text, (image, document) = prompt_text(blocks)
    assert text == "what is wrong here?"
    assert (image.mime_type, image.name, image.width, image.height, image.data) == (
        "image/png", "image 1", 320, 200, png,
    )  # fmt: skip
    assert (document.mime_type, document.name) == ("application/pdf", "spec.pdf")
    assert document.text is not None and "page 2" in document.text


def test_a_damaged_image_from_the_editor_is_refused() -> None:
    from acp.schema import ImageContentBlock

    cut = base64.b64encode(screenshot(100, 100)[:200]).decode()
    with pytest.raises(AttachmentError, match=r"^image 1 is a damaged PNG image"):
        prompt_text([ImageContentBlock(type="image", data=cut, mime_type="image/png")])
