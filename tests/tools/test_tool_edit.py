"""The `edit` and `multi_edit` tools: exact replacement that keeps the file's form."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from moot.tools.base import ToolContext
from moot.tools.edit import edit_tool
from moot.tools.multi_edit import Edit, multi_edit_tool
from moot.tools.read import read_tool
from moot.workspace import Workspace

CTX = ToolContext("s", "r", "c", "main", "t")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def test_a_unique_match_is_replaced(ws: Workspace) -> None:
    path = ws.root / "m.py"
    path.write_text("def f():\n    return 1\n")
    result = edit_tool(ws)(path="m.py", old="return 1", new="return 2")
    assert result.content == "Edited m.py: 1 replacement, at line 2."
    assert path.read_text() == "def f():\n    return 2\n"


def test_ambiguous_matches_need_context_or_replace_all(ws: Workspace) -> None:
    path = ws.root / "m.py"
    path.write_text("a = 0\nb = 0\n")
    edit = edit_tool(ws)
    ambiguous = edit(path="m.py", old="= 0", new="= 1")
    assert ambiguous.is_error and "matches 2 places (lines 1, 2)" in ambiguous.content
    assert path.read_text() == "a = 0\nb = 0\n"
    assert edit(path="m.py", old="= 0", new="= 1", replace_all=True).content == (
        "Edited m.py: 2 replacements, at line 1."
    )
    assert path.read_text() == "a = 1\nb = 1\n"


def test_an_empty_old_is_refused(ws: Workspace) -> None:
    (ws.root / "m.py").write_text("x\n")
    result = edit_tool(ws)(path="m.py", old="", new="y")
    assert result.is_error and "old is empty" in result.content


def test_not_found_shows_the_closest_lines(ws: Workspace) -> None:
    (ws.root / "m.py").write_text("import os\n\ndef main(argv):\n    print(argv)\n")
    result = edit_tool(ws)(path="m.py", old="def main(args):\n    print(args)", new="x")
    assert result.is_error
    assert "Closest match (lines 3-4)" in result.content
    assert "    3\tdef main(argv):" in result.content


def test_a_crlf_file_round_trips_through_read_and_edit(ws: Workspace) -> None:
    path = ws.root / "win.txt"
    path.write_bytes(b"first\r\nsecond\r\nthird\r\n")
    shown = read_tool(ws)(path="win.txt").content
    assert "\r" not in shown
    result = edit_tool(ws)(path="win.txt", old="first\nsecond", new="one\ntwo\nthree")
    assert not result.is_error, result.content
    assert path.read_bytes() == b"one\r\ntwo\r\nthree\r\nthird\r\n"


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16"])
def test_the_encoding_and_bom_are_kept(ws: Workspace, codec: str) -> None:
    path = ws.root / "t.txt"
    path.write_bytes("grüße\nwelt\n".encode(codec))
    assert not edit_tool(ws)(path="t.txt", old="welt", new="wörld").is_error
    assert path.read_bytes() == "grüße\nwörld\n".encode(codec)


def test_undecodable_bytes_survive_an_edit_elsewhere(ws: Workspace) -> None:
    path = ws.root / "latin1.txt"
    path.write_bytes(b"caf\xe9\nplain line\n")
    assert not edit_tool(ws)(path="latin1.txt", old="plain", new="simple").is_error
    assert path.read_bytes() == b"caf\xe9\nsimple line\n"


def test_an_edit_of_a_file_changed_since_it_was_read_is_refused(ws: Workspace) -> None:
    path = ws.root / "m.py"
    path.write_text("x = 1\n")
    read_tool(ws)(path="m.py")
    path.write_text("x = 1\ny = 2\n")
    result = edit_tool(ws)(path="m.py", old="x = 1", new="x = 3")
    assert result.is_error and "changed on disk" in result.content
    assert path.read_text() == "x = 1\ny = 2\n"
    read_tool(ws)(path="m.py")
    assert not edit_tool(ws)(path="m.py", old="x = 1", new="x = 3").is_error


def test_consecutive_edits_need_no_read_in_between(ws: Workspace) -> None:
    (ws.root / "m.py").write_text("a\nb\n")
    read_tool(ws)(path="m.py")
    edit = edit_tool(ws)
    assert not edit(path="m.py", old="a", new="A").is_error
    assert not edit(path="m.py", old="b", new="B").is_error


def test_binary_missing_and_refused_files(ws: Workspace) -> None:
    (ws.root / "blob").write_bytes(b"\x00\x01\x02abc")
    (ws.root / "link.txt").symlink_to(ws.root / "blob")
    edit = edit_tool(ws)
    assert "binary" in edit(path="blob", old="abc", new="x").content
    assert "use write" in edit(path="nope.txt", old="a", new="b").content
    assert "(symlink)" in edit(path="link.txt", old="abc", new="x").content
    assert "(outside-workspace)" in edit(path="../x", old="a", new="b").content
    assert (ws.root / "blob").read_bytes() == b"\x00\x01\x02abc"


def test_the_file_mode_is_kept(ws: Workspace) -> None:
    path = ws.root / "run.sh"
    path.write_text("echo a\n")
    path.chmod(0o755)
    edit_tool(ws)(path="run.sh", old="a", new="b")
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


# multi_edit --------------------------------------------------------------------------------------


def test_multi_edit_applies_in_order(ws: Workspace) -> None:
    path = ws.root / "m.py"
    path.write_text("alpha\nbeta\ngamma\n")
    result = multi_edit_tool(ws)(
        path="m.py",
        edits=[Edit(old="alpha", new="ALPHA"), Edit(old="ALPHA\nbeta", new="AB")],
    )
    assert result.content == "Edited m.py: 2 replacements, at lines 1, 1."
    assert path.read_text() == "AB\ngamma\n"


async def test_multi_edit_is_all_or_nothing(ws: Workspace) -> None:
    path = ws.root / "m.py"
    path.write_text("alpha\nbeta\n")
    edits = [{"old": "alpha", "new": "A"}, {"old": "delta", "new": "D"}]
    result = await multi_edit_tool(ws).invoke({"path": "m.py", "edits": edits}, CTX)
    assert result.is_error and "edit 2 of 2" in result.content
    assert path.read_text() == "alpha\nbeta\n"
    assert sorted(os.listdir(ws.root)) == ["m.py"]


async def test_multi_edit_validates_its_arguments(ws: Workspace) -> None:
    tool = multi_edit_tool(ws)
    empty = await tool.invoke({"path": "m.py", "edits": []}, CTX)
    assert empty.is_error and "edits" in empty.content
    missing = await tool.invoke({"path": "m.py", "edits": [{"old": "a"}]}, CTX)
    assert missing.is_error and "new" in missing.content
