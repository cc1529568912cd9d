"""A PDF as an attachment: the pages asked for (a new, smaller PDF when they are not all of
it), with their text for models that cannot read documents. pypdf, imported lazily."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import time
from collections.abc import Iterator
from typing import Any

from moot.protocol.messages import Attachment

DEFAULT_PAGES = 20
"""Pages a PDF gives without a `pages` range; the note says how to read on."""
MAX_PAGES = 100
"""Pages one range may hold (Anthropic's limit for a document)."""
MAX_TEXT_CHARS = 200_000
"""A document's text kept for models without documents, at most."""
TEXT_SECONDS = 10.0
"""Time a document's text may take to read: past it, the pages left say so. pypdf parses a form
XObject again at each of its uses, so a 2 KB PDF using one large form 5000 times a page would
take hours, in a thread no one can stop."""
_TEXT_LIMITS = {
    "stream_parsing_work_maximum_count": 1_000_000,  # tokens of a stream (~6 s); pypdf: 2 M
    "xform_maximum_invocations_per_extraction": 500,  # forms used on one page; pypdf: 5000
}
_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$")


class PdfError(ValueError):
    """A PDF that cannot be given to a model (damaged, password-protected, a bad range)."""


def page_range(pages: str | None, count: int) -> tuple[int, int]:
    """`pages` ("3", "1-5", "10-") as a 1-based inclusive range within `count` pages; the
    first `DEFAULT_PAGES` when None.

    Raises:
        PdfError: `pages` is not a range of this document, or holds more than `MAX_PAGES`.
    """
    if pages is None or not pages.strip():
        return 1, min(count, DEFAULT_PAGES)
    match = _RANGE.match(pages)
    if match is None:
        raise PdfError(f"pages {pages!r} is not a range: write it as 3, 1-5 or 10-")
    first = int(match.group(1))
    last = count if match.group(2) == "" else int(match.group(2) or first)
    if first < 1 or last < first:
        raise PdfError(f"pages {pages!r} is not a range: the first page is 1, and first <= last")
    if first > count:
        raise PdfError(f"pages {pages!r}: the document has {count} pages")
    last = min(last, count)
    if last - first + 1 > MAX_PAGES:
        raise PdfError(f"pages {pages!r} holds more than {MAX_PAGES} pages: ask for fewer")
    return first, last


def pdf_attachment(
    raw: bytes, name: str, pages: str | None = None, *, text_seconds: float = TEXT_SECONDS
) -> tuple[Attachment, tuple[int, int, int]]:
    """The pages of PDF `raw` as a document attachment named `name`, its text filled in (as
    much as `text_seconds` reads).

    Returns:
        The attachment and (first page, last page, pages in the document).

    Raises:
        PdfError: It is damaged, password-protected or has no pages, or `pages` is wrong;
            the message says which.
    """
    from pypdf import PdfReader, PdfWriter  # lazily: ~60 ms
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(raw))
        if reader.is_encrypted and not _opens_without_password(reader):
            raise PdfError(
                f"{name} is a password-protected PDF: save a copy without the password "
                f"(e.g. qpdf --decrypt --password=... in.pdf out.pdf) and attach that"
            )
        count = len(reader.pages)
    except PdfError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise PdfError(f"{name} is a damaged PDF: {exc}") from None
    if count == 0:
        raise PdfError(f"{name} is a PDF without pages")
    first, last = page_range(pages, count)
    try:
        texts = _texts(reader, first, last, text_seconds)
        if (first, last) != (1, count):
            writer = PdfWriter()
            for n in range(first - 1, last):
                writer.add_page(reader.pages[n])
            out = io.BytesIO()
            writer.write(out)
            raw = out.getvalue()
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise PdfError(f"{name} is a damaged PDF: {exc}") from None
    text = "\n\n".join(f"--- page {n} ---\n{t.strip()}" for n, t in enumerate(texts, first))[
        :MAX_TEXT_CHARS
    ]
    attachment = Attachment(
        mime_type="application/pdf",
        data=base64.b64encode(raw).decode(),
        name=name,
        text=text,
    )
    return attachment, (first, last, count)


class _OutOfTime(Exception):
    """Reading the pages' text took its whole time (`TEXT_SECONDS`)."""


@contextlib.contextmanager
def _no_limits(**_: object) -> Iterator[None]:
    yield


def _texts(reader: Any, first: int, last: int, seconds: float) -> list[str]:
    """The text of pages `first`..`last`, read within `seconds` (checked before each of a
    page's operators, forms' too); a page pypdf will not read within its limits says so."""
    import pypdf
    from pypdf import errors

    # pypdf 7's limits; the deadline alone before
    limited: Any = getattr(pypdf, "apply_configuration", _no_limits)
    too_large = getattr(errors, "LimitReachedError", _OutOfTime)
    deadline = time.monotonic() + seconds

    def in_time(*_: object) -> None:
        if time.monotonic() > deadline:
            raise _OutOfTime

    texts = []
    with limited(**_TEXT_LIMITS):
        for n in range(first - 1, last):
            try:
                texts.append(reader.pages[n].extract_text(visitor_operand_before=in_time) or "")
            except too_large:
                texts.append("[moot: this page's text is too large to read]")
            except _OutOfTime:
                texts.append(f"[moot: text not read: reading it took over {seconds:g} s]")
                break
    return texts


def _opens_without_password(reader: object) -> bool:
    """Whether an encrypted PDF opens with the empty user password (many do: only editing is
    restricted)."""
    try:
        return bool(reader.decrypt(""))  # type: ignore[attr-defined]
    except Exception:  # pypdf raises several kinds for a cipher it cannot use
        return False
