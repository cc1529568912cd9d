"""A path as an attachment, or one clear message: images checked by their content, proved
whole and fitted; PDFs' pages with their text; every bad input refused with a message naming
it (real files, real Pillow and pypdf)."""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path

import pytest

from moot.image_header import image_size
from moot.providers.images import ATTACH_LIMITS, ImageError, shrink
from moot.workspace.attachments import (
    MAX_FILE_BYTES,
    AttachmentError,
    attachment_from_bytes,
    attachment_from_path,
)
from pdf_files import locked_pdf, pdf, photo, screenshot


def refusal(path: Path | str, **options: object) -> str:
    with pytest.raises(AttachmentError) as raised:
        attachment_from_path(path, **options)  # type: ignore[arg-type]
    return str(raised.value)


def test_a_screenshot_is_attached_as_it_is_with_its_size(tmp_path: Path) -> None:
    raw = screenshot(1280, 720)
    (tmp_path / "shot.png").write_bytes(raw)
    shot = attachment_from_path(tmp_path / "shot.png")
    assert (shot.mime_type, shot.name, shot.width, shot.height) == ("image/png", "shot.png",
                                                                     1280, 720)  # fmt: skip
    assert base64.b64decode(shot.data) == raw


def test_a_12_mp_photo_is_downscaled_to_what_a_model_reads(tmp_path: Path) -> None:
    (tmp_path / "photo.jpg").write_bytes(photo(4000, 3000))
    attached = attachment_from_path(tmp_path / "photo.jpg")
    raw = base64.b64decode(attached.data)
    assert (attached.width, attached.height) == (2000, 1500) == image_size(raw)
    assert attached.mime_type == "image/jpeg" and len(raw) <= ATTACH_LIMITS.max_bytes


def test_a_pdf_gives_its_pages_and_their_text(tmp_path: Path) -> None:
    (tmp_path / "spec.pdf").write_bytes(pdf(30))
    whole = attachment_from_path(tmp_path / "spec.pdf")
    assert whole.mime_type == "application/pdf" and whole.is_document
    assert whole.text is not None and "page 20" in whole.text and "page 21" not in whole.text
    some = attachment_from_path(tmp_path / "spec.pdf", pages="2-3")
    assert some.text is not None
    assert "--- page 2 ---\npage 2" in some.text and "page 4" not in some.text
    from pypdf import PdfReader

    assert len(PdfReader(io.BytesIO(base64.b64decode(some.data))).pages) == 2


@pytest.mark.parametrize(
    ("pages", "said"),
    [
        ("7", "pages '7': the document has 3 pages"),
        ("3-1", "pages '3-1' is not a range"),
        ("one", "pages 'one' is not a range: write it as 3, 1-5 or 10-"),
    ],
)
def test_a_wrong_page_range_is_said(tmp_path: Path, pages: str, said: str) -> None:
    (tmp_path / "spec.pdf").write_bytes(pdf(3))
    assert refusal(tmp_path / "spec.pdf", pages=pages).startswith(said)


def test_each_bad_input_gets_one_clear_message(tmp_path: Path) -> None:
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "notes.png").write_text("this is text, not a picture\n")
    (tmp_path / "cut.png").write_bytes(screenshot(300, 200)[:600])
    (tmp_path / "cut.jpg").write_bytes(photo(300, 200)[:900])
    (tmp_path / "locked.pdf").write_bytes(locked_pdf())
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n this is no pdf at all")
    (tmp_path / "data.bin").write_bytes(b"\x00\x01\x02")
    with open(tmp_path / "huge.png", "wb") as huge:  # 200 MB, sparse: nothing is written
        huge.truncate(200 * 1024 * 1024)
    (tmp_path / "dir.png").mkdir()

    assert refusal(tmp_path / "gone.png") == f"{tmp_path / 'gone.png'}: no such file"
    assert refusal(tmp_path / "empty.png") == "empty.png is empty"
    assert refusal(tmp_path / "notes.png") == (
        "notes.png is named like a PNG image but is not one (its content is not a PNG image's)"
    )
    assert refusal(tmp_path / "cut.png").startswith("cut.png is a damaged PNG image: ")
    assert refusal(tmp_path / "cut.jpg").startswith("cut.jpg is a damaged JPEG image: ")
    assert refusal(tmp_path / "locked.pdf").startswith("locked.pdf is a password-protected PDF")
    assert refusal(tmp_path / "broken.pdf").startswith("broken.pdf is a damaged PDF: ")
    assert refusal(tmp_path / "data.bin").startswith(
        "data.bin is neither an image (PNG, JPEG, GIF, WebP) nor a PDF"
    )
    assert refusal(tmp_path / "huge.png") == (
        f"{tmp_path / 'huge.png'} is 200 MB; an attachment is at most "
        f"{MAX_FILE_BYTES // (1024 * 1024)} MB"
    )
    assert (
        refusal(tmp_path / "dir.png")
        == f"{tmp_path / 'dir.png'} is a directory, not a file to attach"
    )


def test_an_unreadable_file_is_said(tmp_path: Path) -> None:
    """A file every read of fails (even root's): the kernel's own `/proc/self/mem`; and one
    this user may not read, where the user is not root (root reads every file)."""
    assert refusal("/proc/self/mem") == "/proc/self/mem cannot be read: Input/output error"
    if os.geteuid() != 0:
        secret = tmp_path / "secret.png"
        secret.write_bytes(screenshot(10, 10))
        secret.chmod(0)
        assert refusal(secret) == f"{secret} cannot be read: permission denied"


def test_a_clipboard_image_is_checked_like_a_file() -> None:
    shot = attachment_from_bytes(screenshot(64, 32), "clipboard.png")
    assert (shot.width, shot.height) == (64, 32)
    with pytest.raises(AttachmentError, match=r"^pasted is empty$"):
        attachment_from_bytes(b"", "pasted")


@pytest.mark.parametrize("kind", ["TIFF", "BMP", "ICO"])
def test_only_the_four_formats_moot_takes_in_are_decoded(kind: str) -> None:
    """Bytes said to be a PNG (an MCP server's image, a tool's) reach Pillow's PNG, JPEG, GIF
    and WebP decoders only: Pillow would try any decoder it has on what it is given."""
    from PIL import Image

    other = io.BytesIO()
    Image.new("RGB", (64, 64), "red").save(other, kind)

    with pytest.raises(ImageError):
        shrink(other.getvalue(), "image/png", ATTACH_LIMITS, prove=True)
    assert shrink(screenshot(64, 64), "image/png", ATTACH_LIMITS, prove=True)[2:] == (64, 64)


def test_a_png_declaring_huge_dimensions_is_refused_before_it_is_decoded(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    """A decompression bomb under Pillow's own limit: 13000x13000 of zeros in 650 KB would
    take 1.4 GB to decode; it is refused by its declared size, before Pillow opens it (its
    `open` warned of the bomb, in the suite's summary, of an image refused anyway)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    side = 13000
    packer = zlib.compressobj(9)
    row = bytes(1 + side * 4)
    idat = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 6, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat)
    (tmp_path / "bomb.png").write_bytes(bomb + chunk(b"IEND", b""))
    said = refusal(tmp_path / "bomb.png")
    assert said.startswith("bomb.png: 13000x13000 is more pixels than moot decodes"), said
    assert not [w for w in recwarn if "DecompressionBomb" in w.category.__name__]


def form_bomb(uses: int, operators: int) -> bytes:
    """A one-page PDF of a few KB whose page uses one large form XObject `uses` times: pypdf
    parses the form again at each use."""
    import zlib

    form = zlib.compress(b"BT /F1 1 Tf (a) Tj ET\n" * operators, 9)
    page = zlib.compress(b"/X Do\n" * uses, 9)
    font = b"/Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >>"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] /Contents 4 0 R"
        b" /Resources << /XObject << /X 5 0 R >> " + font + b" >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%b\nendstream" % (len(page), page),
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << " + font + b" >>"
        b" /Length %d /Filter /FlateDecode >>\nstream\n%b\nendstream" % (len(form), form),
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%b\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_a_pdf_whose_text_would_take_hours_is_read_for_a_bounded_time() -> None:
    """50 uses of a 20000-operator form took 30 s (5000 would take hours): the text is read
    for `text_seconds`, then the page says it was not."""
    import time

    from moot.workspace.pdf import pdf_attachment

    bomb = form_bomb(uses=50, operators=20_000)
    assert len(bomb) < 4096
    started = time.monotonic()
    document, _ = pdf_attachment(bomb, "bomb.pdf", text_seconds=0.5)
    assert time.monotonic() - started < 5
    assert (
        document.text is not None and "text not read: reading it took over 0.5 s" in document.text
    )
