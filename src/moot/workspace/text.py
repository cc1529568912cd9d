"""Telling text from binary, and decoding text so that an edit writes back the same encoding.

Text is UTF-8 unless a byte order mark says UTF-16 or UTF-32. A file is binary when its
head has a NUL byte (and no UTF-16/32 BOM) or is mostly undecodable; a few bad bytes in
otherwise readable text (a Latin-1 file, say) do not make it binary.
"""

from __future__ import annotations

import codecs

import msgspec

SNIFF_BYTES = 8192
"""How much of a file's head decides whether it is binary."""

_BOMS = (
    # UTF-32 LE first: its BOM begins with UTF-16 LE's.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v\x1b")
_MAX_SUSPICIOUS = 0.3
"""Share of undecodable or control characters in the head above which a file is binary."""


class Encoding(msgspec.Struct, frozen=True):
    """How a text file is stored."""

    codec: str
    """A Python codec name: utf-8, utf-16-le, ..."""
    bom: bytes = b""
    """The byte order mark the file starts with, kept on write."""

    @property
    def errors(self) -> str:
        """UTF-8 keeps undecodable bytes as lone surrogates, so they survive an edit unchanged."""
        return "surrogateescape" if self.codec == "utf-8" else "strict"


UTF8 = Encoding("utf-8")


def sniff_encoding(head: bytes) -> Encoding:
    """The encoding a file's BOM names; UTF-8 without a BOM."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return Encoding(codec, bom)
    return UTF8


def looks_binary(head: bytes) -> bool:
    """Whether a file whose first bytes are `head` should not be shown as text."""
    encoding = sniff_encoding(head)
    if encoding.codec != "utf-8":
        return False
    if b"\x00" in head:
        return True
    # Incremental, not final: the head may end in the middle of a multi-byte character.
    sample = codecs.getincrementaldecoder("utf-8")("replace").decode(head, final=False)
    if not sample:
        return False
    suspicious = sum(
        1 for ch in sample if ch == "\ufffd" or (ch < " " and ch not in _ALLOWED_CONTROLS)
    )
    return suspicious / len(sample) > _MAX_SUSPICIOUS


def decode(data: bytes, encoding: Encoding) -> str:
    """The text of a file, for editing: it encodes back to exactly `data`.

    Raises:
        UnicodeDecodeError: A UTF-16/32 file with invalid data.
    """
    return data[len(encoding.bom) :].decode(encoding.codec, encoding.errors)


def decode_for_display(data: bytes, encoding: Encoding) -> tuple[str, bool]:
    """The text of a file for a model to read, and whether bytes were replaced by U+FFFD."""
    body = data[len(encoding.bom) :]
    try:
        return body.decode(encoding.codec), False
    except UnicodeDecodeError:
        return body.decode(encoding.codec, "replace"), True


def encode(text: str, encoding: Encoding) -> bytes:
    """`text` in the file's encoding, with its BOM."""
    return encoding.bom + text.encode(encoding.codec, encoding.errors)


def dominant_newline(text: str) -> str:
    """ "\\r\\n" when most line breaks in `text` are CRLF, else "\\n"."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def to_newline(text: str, newline: str) -> str:
    """`text` with its bare "\\n" line breaks written as `newline` (CRLF left alone)."""
    if newline == "\n" or "\n" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def split_lines(text: str) -> list[str]:
    """Lines as `grep` and `read` number them: split on "\\n", a final "\\r" dropped."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]
