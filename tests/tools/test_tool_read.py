"""The `read` tool: numbered lines, caps, binary and image files, odd encodings."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from moot.tools.base import ToolContext
from moot.tools.read import MAX_OUTPUT_BYTES, read_tool
from moot.workspace import Workspace

PNG = bytes.fromhex(  # a whole one: a damaged image is refused
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
)
CTX = ToolContext("s", "r", "c", "main", "t")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def test_lines_are_numbered_and_a_window_says_how_to_go_on(ws: Workspace) -> None:
    (ws.root / "f.py").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    read = read_tool(ws)
    assert read(path="f.py").content == "\n".join(f"{i:5}\tline {i}" for i in range(1, 11))
    window = read(path="f.py", offset=3, limit=2).content
    assert window == "    3\tline 3\n    4\tline 4\n[lines 3-4 of 10; continue with offset=5]"


def test_an_empty_file_and_an_offset_past_the_end(ws: Workspace) -> None:
    (ws.root / "empty").write_text("")
    (ws.root / "short").write_text("a\nb\n")
    read = read_tool(ws)
    assert read(path="empty").content == "empty is empty."
    past = read(path="short", offset=5)
    assert past.is_error and "past the end" in past.content and "2 lines" in past.content


def test_long_lines_are_cut_with_a_marker(ws: Workspace) -> None:
    (ws.root / "min.js").write_text("x" * 5000 + "\nshort\n")
    lines = read_tool(ws)(path="min.js").content.splitlines()
    assert lines[0] == "    1\t" + "x" * 2000 + "… [line cut: 3000 more chars]"
    assert lines[1] == "    2\tshort"


def test_output_is_capped_with_a_note_on_how_to_read_further(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("".join(f"{i:04} " + "y" * 300 + "\n" for i in range(2000)))
    result = read_tool(ws)(path="big.txt").content
    assert len(result) <= MAX_OUTPUT_BYTES + 200
    last = int(result.splitlines()[-2].split("\t")[0])
    assert result.splitlines()[-1] == (
        f"[output capped at 256 KB; lines 1-{last} of 2000; continue with offset={last + 1}]"
    )
    follow = read_tool(ws)(path="big.txt", offset=last + 1, limit=1).content
    assert follow.startswith(f"{last + 1:5}\t{last:04} ")


def test_binary_files_are_refused(ws: Workspace) -> None:
    (ws.root / "prog").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 10)
    result = read_tool(ws)(path="prog")
    assert result.is_error and "binary file" in result.content


def test_invalid_utf8_is_read_with_replacement_and_a_note(ws: Workspace) -> None:
    (ws.root / "latin1.txt").write_bytes(b"caf\xe9\nna\xefve\n")
    result = read_tool(ws)(path="latin1.txt")
    assert not result.is_error
    assert result.content.splitlines()[:2] == ["    1\tcaf\ufffd", "    2\tna\ufffdve"]
    assert "not valid UTF-8" in result.content


def test_utf16_and_crlf_files_read_as_plain_lines(ws: Workspace) -> None:
    (ws.root / "u16.txt").write_bytes("\ufeffhé\r\nthere\r\n".encode("utf-16-le"))
    assert read_tool(ws)(path="u16.txt").content == "    1\thé\n    2\tthere"


def test_images_come_back_as_attachments(ws: Workspace) -> None:
    (ws.root / "dot.bin").write_bytes(PNG)  # the magic bytes decide, not the name
    result = read_tool(ws)(path="dot.bin")
    assert not result.is_error
    (attachment,) = result.attachments
    assert attachment.mime_type == "image/png"
    assert base64.b64decode(attachment.data) == PNG
    assert "image/png" in result.content


def test_a_huge_sparse_file_is_refused_quickly(ws: Workspace) -> None:
    with open(ws.root / "huge.img", "wb") as file:
        file.truncate(100 * 1024 * 1024)
    started = time.perf_counter()
    result = read_tool(ws)(path="huge.img")
    assert time.perf_counter() - started < 1
    assert result.is_error and "binary" in result.content


def test_a_huge_text_file_is_streamed_and_capped_quickly(ws: Workspace) -> None:
    path = ws.root / "huge.log"
    with open(path, "wb") as file:
        file.write(b"".join(b"entry %d\n" % i for i in range(1000)))
        file.truncate(100 * 1024 * 1024)  # the rest is a sparse run of NUL bytes
    started = time.perf_counter()
    result = read_tool(ws)(path="huge.log", offset=10, limit=5)
    assert time.perf_counter() - started < 1
    lines = result.content.splitlines()
    assert lines[:5] == [f"{i:5}\tentry {i - 1}" for i in range(10, 15)]
    assert lines[5] == "[huge.log is large (100 MiB): showing lines 10-14; continue with offset=15]"
    started = time.perf_counter()
    tail = read_tool(ws)(path="huge.log", offset=999).content
    assert time.perf_counter() - started < 1
    assert tail.splitlines() == [
        "  999\tentry 998",
        " 1000\tentry 999",
        "[huge.log is large (100 MiB): showing lines 999-1000; binary data from line 1001 on]",
    ]


def test_directories_missing_files_and_fifos(ws: Workspace) -> None:
    (ws.root / "dir").mkdir()
    os.mkfifo(ws.root / "pipe")
    read = read_tool(ws)
    assert read(path="dir").is_error and "directory" in read(path="dir").content
    missing = read(path="nope.txt")
    assert missing.is_error and "no such file" in missing.content
    fifo = read(path="pipe")  # must not block waiting for a writer
    assert fifo.is_error and "not-a-file" in fifo.content


def test_paths_outside_the_workspace_are_errors_naming_the_rule(
    ws: Workspace, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret\n")
    (ws.root / "leak").symlink_to(outside)
    read = read_tool(ws)
    for path in ("../x", str(outside), "leak", "a\x00b"):
        result = read(path=path)
        assert result.is_error and "Path refused (" in result.content
        assert "secret" not in result.content.split(":", 2)[-1].replace("secret.txt", "")


async def test_bad_arguments_are_error_results(ws: Workspace) -> None:
    result = await read_tool(ws).invoke({"path": "f", "offset": 0}, CTX)
    assert result.is_error and "offset" in result.content


def test_reading_records_the_file_in_the_ledger(ws: Workspace) -> None:
    (ws.root / "f.txt").write_text("x\n")
    read_tool(ws)(path="f.txt")
    stamp = ws.ledger.stamp(ws.root / "f.txt")
    assert stamp is not None and stamp.size == 2
