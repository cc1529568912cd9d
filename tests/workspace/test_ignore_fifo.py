"""A repository that ships a FIFO as an ignore file, or a link to a device, holds no search or
listing to its deadline: ripgrep, which would wait on the one for a writer and read the other
without end (its memory growing by gigabytes), is killed as it starts to (`special_files`), and
the walk, which reads ignore files without blocking or following links, answers instead."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moot.workspace.file_index import FileIndex
from moot.workspace.ripgrep import SPECIAL_FILE_NOTE, list_files, search_ripgrep
from moot.workspace.search import SearchRequest, search_python
from moot.workspace.special_files import reads_a_device, waits_on_fifo
from programs import ripgrep


@pytest.fixture
def rg() -> str:
    return ripgrep()


@pytest.fixture(params=["fifo", "device"])
def repo(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """Matches above, beside and below a directory whose `.gitignore` is a FIFO, or a link to
    `/dev/zero`."""
    for rel in ("top.py", "deep/a.py", "deep/sub/b.py", "deep/skip.log", "z.log"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("needle = 1\n")
    (tmp_path / ".gitignore").write_text("z.log\n")
    if request.param == "fifo":
        os.mkfifo(tmp_path / "deep" / ".gitignore")
    else:
        (tmp_path / "deep" / ".gitignore").symlink_to("/dev/zero")
    return tmp_path


def test_a_search_where_an_ignore_file_is_special_answers_as_the_walk_does(
    repo: Path, rg: str
) -> None:
    request = SearchRequest(pattern="needle", root=repo, start=repo, deadline=time.monotonic() + 60)
    notes: list[str] = []

    found = list(search_ripgrep(rg, request, notes=notes))

    assert notes == [SPECIAL_FILE_NOTE]
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


def test_a_process_reading_a_device_is_told_from_one_on_its_standard_streams(
    tmp_path: Path,
) -> None:
    """A descriptor past 0-2 on a device is what counts: the streams may be `/dev/null`."""
    hold = (
        "import sys, time; f = open(sys.argv[1], 'rb'); print('open', flush=True); time.sleep(30)"
    )
    (tmp_path / "file").write_text("x")
    reading = subprocess.Popen(
        [sys.executable, "-c", hold, "/dev/zero"], stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    plain = subprocess.Popen(
        [sys.executable, "-c", hold, str(tmp_path / "file")], stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for process in (reading, plain):
            assert process.stdout is not None and process.stdout.readline() == b"open\n"
        assert reads_a_device(reading.pid)
        assert not reads_a_device(plain.pid)
    finally:
        for process in (reading, plain):
            process.kill()
            process.wait()
