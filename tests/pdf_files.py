"""Small real PDFs and images for tests (not a test module): a PDF whose pages say their number,
the same with a password, photos and screenshots of a given size."""

from __future__ import annotations

import io
import os


def pdf(pages: int = 3, word: str = "page") -> bytes:
    """A PDF of `pages` pages, page n showing "<word> n" (Helvetica), xref offsets exact."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 2 * n} 0 R" for n in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    font = 3 + 2 * pages
    for n in range(pages):
        content = f"BT /F1 24 Tf 72 720 Td ({word} {n + 1}) Tj ET".encode()
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * n} 0 R"
            f" /Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % at for at in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def locked_pdf(password: str = "secret") -> bytes:
    """A PDF that opens only with `password` (RC4: pypdf needs no cipher library for it)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf(1))))
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def photo(width: int, height: int, quality: int = 90) -> bytes:
    """A JPEG photo-like image (smooth gradients and some noise) of this size."""
    from PIL import Image

    gradient = Image.linear_gradient("L").resize((width, height))
    noise = Image.frombytes("L", (width, height), os.urandom(width * height))
    image = Image.merge("RGB", (gradient, noise, gradient.transpose(Image.Transpose.ROTATE_180)))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


def screenshot(width: int, height: int, seed: int = 0) -> bytes:
    """A PNG like a screenshot: flat colours, text-like rows, distinct for each seed."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), (30 + seed % 200, 30, 40))
    draw = ImageDraw.Draw(image)
    for row in range(0, height, 18):
        draw.text((10, row), f"{seed:04d} line {row} def f(x): return x * {row}", fill=(220,) * 3)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()
