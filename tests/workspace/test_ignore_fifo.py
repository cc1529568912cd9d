"""A repository that ships a FIFO as an ignore file holds no search or listing to its deadline:
ripgrep, which would wait on it for a writer, is killed as it starts to wait (`fifo_watch`), and
the walk, which reads ignore files without blocking, answers instead."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moot.workspace.fifo_watch import waits_on_fifo
from moot.workspace.file_index import FileIndex
from moot.workspace.ripgrep import FIFO_NOTE, list_files, search_ripgrep
from moot.workspace.search import SearchRequest, search_python
from programs import ripgrep


@pytest.fixture
def rg() -> str:
    return ripgrep()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Matches above, beside and below a directory whose `.gitignore` is a FIFO."""
    for rel in ("top.py", "deep/a.py", "deep/sub/b.py", "deep/skip.log", "z.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("needle = 1\n")
    (tmp_path / ".gitignore").write_text("z.log\n")
    os.mkfifo(tmp_path / "deep" / ".gitignore")
    return tmp_path


def test_a_search_where_an_ignore_file_is_a_fifo_answers_as_the_walk_does(
    repo: Path, rg: str
) -> None:
    request = SearchRequest(pattern="needle", root=repo, start=repo, deadline=time.monotonic() + 60)
    notes: list[str] = []

    found = list(search_ripgrep(rg, request, notes=notes))

    assert notes == [FIFO_NOTE]
    assert found == list(search_python(request, []))
    assert [rel for rel, _ in found] == ["deep/a.py", "deep/skip.log", "deep/sub/b.py", "top.py"]


def test_the_file_index_is_built_by_the_walk_where_ripgrep_would_wait(repo: Path, rg: str) -> None:
    assert list_files(rg, repo, time.monotonic() + 60) is None

    listing = FileIndex(repo, rg).listing()

    assert listing.notes == ()
    assert "deep/sub/b.py" in listing.files and "z.log" not in listing.files


def test_a_process_waiting_to_open_a_fifo_is_told_from_one_reading_a_file(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_text("x")
    waiting = subprocess.Popen([sys.executable, "-c", f"open({str(tmp_path / 'pipe')!r})"])
    sleeping = subprocess.Popen(["sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while not waits_on_fifo(waiting.pid):  # it reaches the open soon after it starts
            assert time.monotonic() < deadline, "never saw it wait on the FIFO"
            time.sleep(0.02)
        assert not waits_on_fifo(sleeping.pid)
    finally:
        waiting.kill()
        sleeping.kill()
        waiting.wait()
        sleeping.wait()
