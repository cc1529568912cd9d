"""Edits through the editor (issue 33): when the ACP client offers `fs/write_text_file`,
moot's `edit`, `multi_edit` and `write` change the editor's buffer, the text the model read,
and leave the disk alone; the rewind snapshot keeps what the editor held. Driven by the ACP
Python SDK's client over a real `moot acp` process; the model is scripted."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.schema import ClientCapabilities, FileSystemCapabilities

from acp_client import Editor, agent, call, scripted

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "notes.txt").write_text("hello world\n")
    (root / "plan.txt").write_text("one\ntwo\n")
    return root


async def test_edits_go_to_the_editors_buffer_not_the_disk(workspace: Path, tmp_path: Path) -> None:
    notes, plan, fresh = (str(workspace / n) for n in ("notes.txt", "plan.txt", "new/fresh.txt"))
    model = scripted(
        tmp_path / "m.json",
        call("read", path="notes.txt"),
        # "unsaved" is only in the editor's buffer: the edit applies to what the model read.
        call("edit", path="notes.txt", old="unsaved world", new="edited world"),
        call("read", path="plan.txt"),
        call("multi_edit", path="plan.txt", edits=[
            {"old": "one", "new": "1"}, {"old": "two", "new": "2"},
        ]),
        call("write", path="new/fresh.txt", content="fresh\n"),
        {"text": "done"},
    )  # fmt: skip
    editor = Editor()
    editor.buffers[notes] = "hello unsaved world\n"
    async with agent(workspace, editor, model) as conn:
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        done = await conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
    assert done.stop_reason == "end_turn"
    failed = [u for u in editor.of("tool_call_update") if u.status == "failed"]
    assert failed == []
    assert len(editor.asked) == 3  # asked as ever: the edit, the multi_edit and the write
    assert editor.written == [notes, plan, fresh]
    assert editor.buffers[notes] == "hello edited world\n"
    assert editor.buffers[plan] == "1\n2\n"
    assert editor.buffers[fresh] == "fresh\n"
    assert (workspace / "notes.txt").read_text() == "hello world\n"  # the disk is the editor's
    assert (workspace / "plan.txt").read_text() == "one\ntwo\n"
    assert not (workspace / "new").exists()

    db = Path(os.environ["MOOT_HOME"]) / "data" / "sessions.db"
    with sqlite3.connect(db) as kept:
        rows = kept.execute(
            "SELECT path, digest FROM snapshots WHERE session_id = ?", (new.session_id,)
        ).fetchall()
        blobs = {
            path: kept.execute("SELECT data FROM blobs WHERE digest = ?", (digest,)).fetchone()
            for path, digest in rows
            if digest is not None
        }
    assert {path for path, _ in rows} >= {"notes.txt", "plan.txt", "new/fresh.txt"}
    # The rewind keeps the text the editor held, unsaved changes included.
    assert bytes(blobs["notes.txt"][0]) == b"hello unsaved world\n"


async def test_an_edit_refused_when_the_editors_buffer_changed_since_the_read(
    workspace: Path, tmp_path: Path
) -> None:
    notes = str(workspace / "notes.txt")
    model = scripted(
        tmp_path / "m.json",
        call("read", path="notes.txt"),
        call("edit", path="notes.txt", old="world", new="there"),
        {"text": "done"},
    )
    editor = Editor()

    def person_types(options: list[object]) -> str:
        editor.buffers[notes] = "hello world, typed\n"  # while moot asks, the person types
        return "once"

    editor.choose = person_types
    async with agent(workspace, editor, model) as conn:
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
    (failed,) = [u for u in editor.of("tool_call_update") if u.status == "failed"]
    assert "changed in the editor" in failed.content[-1].content.text
    assert editor.written == []
    assert editor.buffers[notes] == "hello world, typed\n"


async def test_an_editor_that_only_reads_leaves_the_writes_to_the_disk(
    workspace: Path, tmp_path: Path
) -> None:
    model = scripted(
        tmp_path / "m.json",
        call("edit", path="notes.txt", old="world", new="disk"),
        {"text": "done"},
    )
    editor = Editor()
    async with agent(workspace, editor, model) as conn:
        capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True))
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        await conn.prompt(session_id=new.session_id, prompt=[text_block("edit")])
    assert editor.written == []
    assert (workspace / "notes.txt").read_text() == "hello disk\n"
