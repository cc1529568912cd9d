"""Attachment bytes stored once: what the store writes in place of an attachment's base64.

An image or a PDF the person sends in ten turns, or a tool returns again and again, is one row
of `blobs` (content by sha256, as file snapshots are): the event's or checkpoint item's JSON
holds `{"mime_type": ..., "data": "", "ref": "<sha256>"}` instead of its base64. Reading an
event puts the base64 back, byte for byte, before it is decoded, so every reader of the log
sees what was appended. A checkpoint's items are read as stored (`Attachment.ref`, no data):
resuming a session reads none of its images, and the request that needs them resolves them
(`Unpacker.base64`, cached). What a log costs on disk is its text plus each attachment once.

Only values whose base64 re-encodes to the very same text are stored by reference (anything
else stays inline, unchanged), so a read-back is always byte-identical to what was appended.
"""

from __future__ import annotations

import base64
import binascii
import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec

MARK = "ref"
"""The key (`Attachment.ref`) that says an attachment's data is in `blobs` under this sha256."""
_MARK_BYTES = b'"ref":"'
_MIME_BYTES = b'"mime_type"'
MIN_INLINE = 256
"""Base64 shorter than this stays inline: a reference would cost about as much."""
CACHE_BYTES = 64 * 1024 * 1024
"""How much base64 text `Unpacker` keeps (the same screenshot in many events is read once)."""

_ENCODE = msgspec.json.Encoder()


def might_hold_attachments(body: str | bytes) -> bool:
    """Whether `body` may hold an attachment worth storing by reference (a cheap test)."""
    raw = body.encode() if isinstance(body, str) else body
    return _MIME_BYTES in raw


def pack(body: str | bytes, put: Callable[[bytes], str]) -> tuple[bytes, list[str]] | None:
    """`body` with each attachment's base64 replaced by a reference to `put(raw bytes)`.

    Returns:
        The new JSON and the digests it names, or None when nothing was replaced.
    """
    if not might_hold_attachments(body):
        return None
    tree = msgspec.json.decode(body)
    digests: list[str] = []
    _walk(tree, lambda node: _pack_one(node, put, digests))
    if not digests:
        return None
    return _ENCODE.encode(tree), digests


def _pack_one(node: dict[str, Any], put: Callable[[bytes], str], digests: list[str]) -> None:
    data = node.get("data")
    if (
        not isinstance(data, str)
        or len(data) < MIN_INLINE
        or not isinstance(node.get("mime_type"), str)
    ):
        return
    if node.get(MARK):
        return
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return
    if base64.b64encode(raw).decode() != data:
        return  # not canonical: a read-back would differ, so it stays as it came
    digest = put(raw)
    node["data"] = ""
    node[MARK] = digest
    digests.append(digest)


def _walk(tree: Any, visit: Callable[[dict[str, Any]], None]) -> None:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "mime_type" in node:
                visit(node)
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))


def packed_for(
    db: sqlite3.Connection, session_id: str, body: str | bytes, put: Callable[[bytes], str]
) -> str | bytes:
    """`body` as `pack` leaves it, each blob it names recorded as named by the session in
    `attachment_refs` (so deleting another session keeps them); `body` itself when it holds
    no attachment worth a reference."""
    packed = pack(body, put)
    if packed is None:
        return body
    text, digests = packed
    db.executemany(
        "INSERT OR IGNORE INTO attachment_refs VALUES (?, ?)",
        [(session_id, digest) for digest in digests],
    )
    return text.decode() if isinstance(body, str) else text


class Unpacker:
    """Puts attachments' base64 back into stored JSON, reading each blob once while cached."""

    def __init__(self, get: Callable[[str], bytes]) -> None:
        self._get = get
        self._cache: OrderedDict[str, str] = OrderedDict()
        self._cached = 0

    def unpack(self, body: str | bytes) -> str | bytes:
        """`body` as it was appended (itself when it names no blob)."""
        raw = body.encode() if isinstance(body, str) else body
        if _MARK_BYTES not in raw:
            return body
        tree = msgspec.json.decode(raw)
        _walk(tree, self._unpack_one)
        out = _ENCODE.encode(tree)
        return out.decode() if isinstance(body, str) else out

    def base64(self, digest: str) -> str:
        """The blob `digest` as base64 text.

        Raises:
            KeyError: No such blob.
        """
        text = self._cache.get(digest)
        if text is not None:
            self._cache.move_to_end(digest)
            return text
        text = base64.b64encode(self._get(digest)).decode()
        self._cache[digest] = text
        self._cached += len(text)
        while self._cached > CACHE_BYTES and len(self._cache) > 1:
            _, dropped = self._cache.popitem(last=False)
            self._cached -= len(dropped)
        return text

    def _unpack_one(self, node: dict[str, Any]) -> None:
        digest = node.get(MARK)
        if not isinstance(digest, str) or node.get("data") != "":
            return
        node["data"] = self.base64(digest)
        node[MARK] = None
