"""Images for the attachments benchmark: a 12 MP photo and screenshots (made with Pillow)."""

from __future__ import annotations

import io
import random


def photo(width: int = 4000, height: int = 3000) -> bytes:
    """A JPEG like a phone's photo: smooth areas and grain, ~3-5 MB at 12 MP (quality 92)."""
    from PIL import Image, ImageFilter

    rng = random.Random(12)
    small = Image.frombytes("RGB", (64, 48), rng.randbytes(64 * 48 * 3))
    base = small.resize((width, height), Image.Resampling.BICUBIC)
    grain = Image.frombytes("L", (width, height), rng.randbytes(width * height))
    grain = grain.filter(ImageFilter.GaussianBlur(1)).convert("RGB")
    image = Image.blend(base, grain, 0.15)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=92)
    return out.getvalue()


def screenshot(width: int, height: int, seed: int = 0) -> bytes:
    """A PNG like a screenshot of an editor: flat colours and rows of text, one per seed."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), (30 + seed % 200, 30, 40))
    draw = ImageDraw.Draw(image)
    for row in range(0, height, 18):
        draw.text((10, row), f"{seed:04d} line {row} def f(x): return x * {row}", fill=(220,) * 3)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()
