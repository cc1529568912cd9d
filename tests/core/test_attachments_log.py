"""Attachments in the log once: their bytes are one blob by content hash, never base64 again
per event or checkpoint; a resumed session (after a real `kill -9` too), a fork and a delete
of another session keep them (a real HTTP model server, a real SQLite store)."""

from __future__ import annotations

import base64
import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import wire_builders as wire
from model_server import ModelServer, Reply
from moot.client.local import SessionOptions, open_client
from moot.client.upkeep import SessionUpkeep
from moot.protocol.messages import Attachment
from moot.store.sqlite import SQLiteStore
from moot.testing import drive_turn
from moot_cli import moot_command, moot_env

MODEL = "anthropic/claude-haiku-4-5"


TIMEOUT = 30


def png(width: int = 64, height: int = 48, seed: int = 7) -> bytes:
    """A real PNG of noise (does not compress away)."""
    import random
    import struct
    import zlib

    rng = random.Random(seed)
    rows = b"".join(b"\0" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return root


def image_blocks(body: dict) -> list[dict]:
    """Every image block of an Anthropic request, tool results' included, in order."""
    found: list[dict] = []
    stack: list[object] = [body["messages"]]
    while stack:
        node = stack.pop(0)
        if isinstance(node, dict):
            if node.get("type") == "image":
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


async def test_an_image_sent_in_ten_turns_is_stored_once(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = png(200, 150)
    data = base64.b64encode(raw).decode()
    shot = Attachment(mime_type="image/png", data=data, name="shot.png")
    db = tmp_path / "s.db"
    with ModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.reply(*[Reply(body=wire.anthropic(f"seen {n}", n=n)) for n in range(12)])
        client = open_client(SessionOptions(cwd=workspace, model=MODEL), store=SQLiteStore(db))
        session = client.session_id
        for n in range(10):
            await drive_turn(client, f"look again {n}", attachments=[shot])
        await client.close()
        # Each request carries every image the conversation holds, as it was sent.
        last = server.requests[-1].json
        assert [b["source"]["data"] for b in image_blocks(last)] == [data] * 10

        connection = sqlite3.connect(db)
        assert connection.execute("SELECT COUNT(*) FROM blobs").fetchone() == (1,)
        (stored,) = connection.execute("SELECT data FROM blobs").fetchone()
        assert bytes(stored) == raw
        bodies = [b for (b,) in connection.execute("SELECT body FROM events")]
        items = [bytes(i) for (i,) in connection.execute("SELECT item FROM checkpoint_items")]
        assert all(data[:200] not in body for body in bodies)
        assert all(data[:200].encode() not in item for item in items)
        # What the text of the log costs besides the blob: far less than one more copy.
        text = sum(map(len, bodies)) + sum(map(len, items))
        assert text < len(data)
        connection.close()

        # Resumed: the same base64 back, in every turn, in the next request.
        resumed = open_client(
            SessionOptions(cwd=workspace, session_id=session), store=SQLiteStore(db)
        )
        await drive_turn(resumed, "and now?")
        await resumed.close()
        assert image_blocks(server.requests[-1].json) == image_blocks(last)


async def test_a_fork_keeps_the_image_when_its_original_is_deleted(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = base64.b64encode(png()).decode()
    db = tmp_path / "s.db"
    with ModelServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.reply(*[Reply(body=wire.anthropic("ok", n=n)) for n in range(3)])
        client = open_client(SessionOptions(cwd=workspace, model=MODEL), store=SQLiteStore(db))
        original = client.session_id
        await drive_turn(client, "look", attachments=[Attachment(mime_type="image/png", data=data)])
        await client.close()
    store = SQLiteStore(db)
    fork_id = SessionUpkeep(store).fork(original)
    store.delete_session(original)
    (started,) = store.events(fork_id, kinds=("turn_started",))
    assert started.attachments[0].data == data
    store.delete_session(fork_id)
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM blobs").fetchone() == (0,)


def test_a_resume_after_kill_9_sends_the_same_image_bytes(tmp_path: Path) -> None:
    """`read` of a PNG gives the model the image; the process is killed while the next answer
    streams; the resumed process asks again with the very same image block."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "shot.png").write_bytes(png(120, 90))
    with ModelServer() as server:
        server.reply(
            Reply(body=wire.anthropic(call=("read", {"path": "shot.png"}), n=1)),
            Reply(body=wire.anthropic("x" * 400, n=2), fault="slow", delay=TIMEOUT),
            Reply(body=wire.anthropic("I see it", n=3)),
        )
        env = {**moot_env(tmp_path / "home"), "MOOT_SANDBOX": "none",
               "ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.url}  # fmt: skip
        args = ("--model", MODEL, "--output-format", "events",
                "--permission-mode", "bypassPermissions")  # fmt: skip
        proc = subprocess.Popen(
            moot_command("-p", "what is in shot.png?", *args), cwd=work, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + TIMEOUT
        while len(server.requests) < 2:  # the second request holds the image: kill then
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the second request never came"
            os.sched_yield()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        resumed = subprocess.run(
            moot_command("--resume", first["session_id"], *args), cwd=work, env=env,
            text=True, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    before, after = server.requests[1].json, server.requests[2].json
    (image,) = image_blocks(before)
    assert image_blocks(after) == [image]
    assert base64.b64decode(image["source"]["data"]) == (work / "shot.png").read_bytes()
