"""Attachment bytes as the store keeps them: one blob by hash, a reference in the JSON, the
base64 put back byte for byte when an event is read; what would not read back the same stays
inline; a database an older moot wrote opens and stores attachments once from then on."""

from __future__ import annotations

import base64
import shutil
import sqlite3
from pathlib import Path

import msgspec

from moot.protocol.messages import Attachment
from moot.store.attachment_blobs import MIN_INLINE, Unpacker, pack
from moot.store.sqlite import SQLiteStore
from store_builders import short_run

SCHEMA_2 = Path(__file__).parents[1] / "fixtures" / "schema2.db"


def test_a_reference_reads_back_as_the_very_bytes_and_odd_base64_stays_inline() -> None:
    blobs: dict[str, bytes] = {}

    def put(raw: bytes) -> str:
        digest = f"d{len(blobs)}"
        blobs[digest] = raw
        return digest

    canonical = base64.b64encode(bytes(range(256)) * 4).decode()
    body = msgspec.json.encode(
        {
            "attachments": [
                {"mime_type": "image/png", "data": canonical, "name": "a", "ref": None},
                {"mime_type": "image/png", "data": canonical[:-4] + "\n" + canonical[-4:]},
                {"mime_type": "image/png", "data": "aGk="},  # short: not worth a reference
            ],
            "arguments": {"mime_type": "x", "data": 5},
        }
    )
    packed = pack(body, put)
    assert packed is not None
    text, digests = packed
    assert digests == ["d0"] and canonical not in text.decode()
    assert Unpacker(blobs.__getitem__).unpack(text) == body
    assert pack(b'{"prompt": "no attachment here"}', put) is None
    assert len("aGk=") < MIN_INLINE


def test_an_older_database_opens_and_then_stores_attachments_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    shutil.copy(SCHEMA_2, path)
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(2000)).decode()
    shot = Attachment(mime_type="image/png", data=data, name="shot.png")
    with SQLiteStore(path) as store:
        for _ in range(2):
            first, *rest = short_run("ses_empty")
            store.append(msgspec.structs.replace(first, attachments=(shot,)))
            for event in rest:
                store.append(event)
        started = store.events("ses_empty", kinds=("turn_started",))
        assert [e.attachments for e in started] == [(shot,), (shot,)]
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM blobs").fetchone() == (1,)
    assert db.execute("SELECT COUNT(*) FROM attachment_refs").fetchone() == (1,)
    assert all(data not in body for (body,) in db.execute("SELECT body FROM events"))
    db.close()
