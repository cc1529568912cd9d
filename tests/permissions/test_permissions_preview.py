"""Approving a file change shows its unified diff, computed in memory, nothing written."""

from __future__ import annotations

from pathlib import Path

from moot.permissions.decide import decide
from moot.permissions.rules import RuleSet
from moot.protocol.approval import ApprovalRequest
from moot.protocol.modes import PermissionMode
from moot.tools.base import SideEffect


def asked(root: Path, tool: str, **arguments: object) -> str:
    request = ApprovalRequest("s", "main", "c", "t", tool, SideEffect.WRITES_WORKSPACE, arguments)
    verdict = decide(request, PermissionMode.DEFAULT, RuleSet(), root)
    assert verdict.decision == "ask"
    return verdict.preview


def test_an_edit_shows_its_diff_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n")
    preview = asked(tmp_path, "edit", path="a.py", old="y = 2", new="y = 3")
    assert preview.splitlines() == [
        "--- a/a.py",
        "+++ b/a.py",
        "@@ -1,2 +1,2 @@",
        " x = 1",
        "-y = 2",
        "+y = 3",
    ]
    assert (tmp_path / "a.py").read_text() == "x = 1\ny = 2\n"


def test_a_new_file_and_a_multi_edit(tmp_path: Path) -> None:
    created = asked(tmp_path, "write", path="new.txt", content="hello\n")
    assert created.splitlines()[:2] == ["--- /dev/null", "+++ b/new.txt"]
    assert "+hello" in created
    (tmp_path / "b.txt").write_text("a a\nb\n")
    edits = [{"old": "a", "new": "z", "replace_all": True}, {"old": "b", "new": "c"}]
    multi = asked(tmp_path, "multi_edit", path="b.txt", edits=edits)
    assert "+z z" in multi and "+c" in multi


def test_what_cannot_be_previewed_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    missing = asked(tmp_path, "edit", path="a.py", old="nope", new="y")
    assert "not in the file" in missing
    outside = asked(tmp_path, "edit", path="../etc/passwd", old="a", new="b")
    assert outside.startswith("(no preview")
    same = asked(tmp_path, "write", path="a.py", content="x = 1\n")  # an empty diff said so
    assert same == "(no change: a.py already holds exactly this)"


def test_a_file_too_large_to_diff_shows_the_change_alone_at_once(tmp_path: Path) -> None:
    """A diff of a 50 MB file took 5 s on the event loop, stalling every peer."""
    from moot.permissions.preview import MAX_PREVIEW_BYTES

    line = b"a line of a large generated file\n"
    (tmp_path / "big.txt").write_bytes(line * (MAX_PREVIEW_BYTES // len(line) + 2))
    preview = asked(tmp_path, "edit", path="big.txt", old="a line of", new="one line of")
    assert preview.splitlines() == [
        f"(big.txt is {(tmp_path / 'big.txt').stat().st_size:,} bytes, too large to diff here;"
        " the change on its own:)",
        "-a line of",
        "+one line of",
    ]
    written = asked(tmp_path, "write", path="big.txt", content="short\n")
    assert written.splitlines()[1:] == ["(the whole file is replaced by)", "+short"]
