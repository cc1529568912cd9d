"""Capping a command's output: head and tail kept, the middle elided, all of it in a file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.sandbox.output import HeadTail, OutputCapture, OutputDir, elision_marker


def lines(first: int, last: int) -> str:
    return "".join(f"line {i}\n" for i in range(first, last + 1))


def test_text_within_the_limit_comes_back_whole() -> None:
    kept = HeadTail(limit=100)
    for piece in ("a" * 40, "b" * 40, "c" * 20):
        kept.add(piece)

    assert kept.render() == "a" * 40 + "b" * 40 + "c" * 20
    assert kept.total == 100


def test_longer_text_keeps_its_head_and_tail_around_a_marker() -> None:
    kept = HeadTail(limit=1000)
    text = lines(1, 5000)
    for start in range(0, len(text), 777):  # pieces that cut lines anywhere
        kept.add(text[start : start + 777])

    shown = kept.render(where=".moot/outputs/x/cmd-0001.txt")

    head, _, rest = shown.partition("\n[... ")
    tail = rest.partition(" ...]\n")[2]
    assert text.startswith(head) and head.endswith("\n"), "cut at a line break"
    assert text.endswith(tail) and tail.startswith("line "), "begun at a line start"
    assert len(head) <= 500 and len(tail) <= 500
    elided = len(text) - len(head) - len(tail)
    assert (
        f"{elided:,} characters elided; the full output is in .moot/outputs/x/cmd-0001.txt" in shown
    )


def test_a_smaller_budget_cuts_further() -> None:
    kept = HeadTail(limit=1000)
    kept.add("x" * 800)

    shown = kept.render(200)

    assert shown == "x" * 100 + elision_marker(600) + "x" * 100


def test_memory_stays_bounded_for_endless_output() -> None:
    kept = HeadTail(limit=1000)
    for _ in range(10_000):
        kept.add("y" * 100 + "\n")

    assert kept.total == 1_010_000
    assert sum(len(piece) for piece in kept._tail) < 1000 + 101


@pytest.fixture
def files(tmp_path: Path) -> OutputDir:
    return OutputDir(tmp_path)


def test_short_output_is_not_saved(files: OutputDir) -> None:
    streamed: list[str] = []
    capture = OutputCapture(files, limit=100, on_output=streamed.append)

    capture.feed("stdout", b"out\n")
    capture.feed("stderr", b"err\n")
    result = capture.finish()

    assert (result.stdout, result.stderr, result.truncated, result.output_file) == (
        "out\n",
        "err\n",
        False,
        None,
    )
    assert streamed == ["out\n", "err\n"]
    assert not files.directory.exists()


def test_long_output_is_saved_whole_in_arrival_order(files: OutputDir, tmp_path: Path) -> None:
    capture = OutputCapture(files, limit=1000)
    expected = ""
    for i in range(300):
        stream = "stderr" if i % 10 == 0 else "stdout"
        text = f"{stream} {i}\n"
        capture.feed(stream, text.encode())
        expected += text

    result = capture.finish()

    assert result.truncated and result.output_file is not None
    assert result.output_file.read_text() == expected
    # Saved in the user data dir (MOOT_HOME here), never in the project.
    assert result.output_file.parent.parent == Path(os.environ["MOOT_HOME"]) / "data" / "outputs"
    assert not (tmp_path / ".moot").exists()
    shown = len(result.stdout) + len(result.stderr)
    assert shown < 1000 + 2 * len(elision_marker(10**6, "x" * 60))
    assert result.stderr.startswith("stderr 0\n"), "the short stream keeps its share"
    assert str(result.output_file) in result.stdout


def test_utf8_split_across_reads_decodes_whole(files: OutputDir) -> None:
    data = "héllo wörld ✓\n".encode()
    capture = OutputCapture(files)
    for byte in data:
        capture.feed("stdout", bytes([byte]))
    capture.feed("stdout", b"\xff\n")

    assert capture.finish().stdout == "héllo wörld ✓\n\ufffd\n"


def test_each_command_gets_its_own_file(files: OutputDir) -> None:
    made = []
    for _ in range(2):
        capture = OutputCapture(files, limit=10)
        capture.feed("stdout", b"0123456789abcdef")
        made.append(capture.finish().output_file)

    assert made[0] != made[1]
    assert all(path is not None and path.read_text() == "0123456789abcdef" for path in made)


def test_a_planted_symlink_is_not_followed(tmp_path: Path) -> None:
    """An output directory a caller puts inside the workspace: a command could make `.moot` a
    symlink where `.moot` did not exist (nothing to bind read-only then); moot's own write must
    not follow it out of the workspace."""
    workspace, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    workspace.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, workspace / ".moot")
    capture = OutputCapture(OutputDir(workspace, workspace / ".moot" / "outputs"), limit=10)

    capture.feed("stdout", b"x" * 100)
    result = capture.finish()

    assert result.truncated and result.output_file is None
    assert "symlink" in capture.spill_error
    assert list(elsewhere.iterdir()) == []
    assert "characters elided" in result.stdout


def test_an_output_dir_outside_the_workspace_works_too(tmp_path: Path) -> None:
    files = OutputDir(tmp_path / "ws", tmp_path / "outputs" / "session")
    capture = OutputCapture(files, limit=10)

    capture.feed("stdout", b"x" * 100)
    result = capture.finish()

    assert result.output_file == tmp_path / "outputs" / "session" / "cmd-0001.txt"
    assert files.display(result.output_file) == str(result.output_file)
