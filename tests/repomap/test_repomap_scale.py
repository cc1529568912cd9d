"""The repository map of a big repository (issue 31): parsed in parser processes, cached by
content, bounded in time, and never silent about what it left out."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from moot.repomap import RepoIndex, build_repo_map
from moot.repomap.index import IN_PROCESS_UP_TO
from moot.repomap.languages import Grammars, language_for
from moot.repomap.parallel import ParserPool
from moot.repomap.parse import MAX_FILE_BYTES, parse_file
from moot.tools.glob import glob_tool
from moot.tools.repo_map import map_workspace
from moot.workspace.paths import Workspace


def modules(root: Path, count: int) -> None:
    """`count` small Python modules in packages of 50, each using the one before it."""
    for number in range(count):
        path = root / f"pkg{number // 50:02}" / f"mod{number:04}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        uses = f"helper_{number - 1}()" if number else "0"
        path.write_text(
            f"def helper_{number}():\n    return {uses}\n\n\nclass Thing{number}:\n    pass\n"
        )


def test_a_file_past_the_size_limit_is_named_in_the_maps_output(tmp_path: Path) -> None:
    modules(tmp_path, 3)
    big = tmp_path / "generated.py"
    big.write_text("VALUE = 1\n" * (MAX_FILE_BYTES // 10 + 10))
    (tmp_path / "image.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20)

    result = build_repo_map(tmp_path)
    answer = map_workspace(Workspace(tmp_path), (), 1024).content

    size_note = "1 file(s) past the 512 KB size limit left out: generated.py"
    assert "generated.py" not in result.ranked
    assert size_note in result.notes
    assert f"[{size_note}]" in answer
    assert "[1 binary file(s) left out: image.py]" in answer


def test_an_mtime_only_change_takes_the_tags_from_the_cache_by_content(tmp_path: Path) -> None:
    modules(tmp_path, 4)
    first = build_repo_map(tmp_path)
    assert len(first.parsed) == 4

    touched = tmp_path / "pkg00" / "mod0002.py"
    info = touched.stat()
    os.utime(touched, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))
    (tmp_path / "copy.py").write_bytes((tmp_path / "pkg00" / "mod0001.py").read_bytes())
    again = build_repo_map(tmp_path)

    assert again.parsed == ()  # both contents were known: read and hashed, not parsed
    assert "copy.py" in again.ranked and "pkg00/mod0002.py" in again.ranked
    assert again.text == build_repo_map(tmp_path).text


def test_what_a_look_had_no_time_to_parse_is_counted_and_parsed_by_the_next(
    tmp_path: Path,
) -> None:
    modules(tmp_path, 20)
    with RepoIndex(tmp_path, background=False) as index:
        hurried = index.index(seconds=0)
        assert hurried.pending == 20 and hurried.facts == {}
        assert hurried.notes == (
            "20 of 20 source files are not parsed yet (a look parses for 2 s); map again to"
            " parse more",
        )
        complete = index.index()
    assert complete.pending == 0 and complete.notes == ()
    assert len(complete.facts) == 20


def test_many_files_are_parsed_by_parser_processes_as_they_are_in_process(
    tmp_path: Path,
) -> None:
    count = IN_PROCESS_UP_TO * 2
    modules(tmp_path, count)
    with RepoIndex(tmp_path, background=False) as index:
        found = index.index(seconds=600)
        assert found.pending == 0 and len(found.parsed) == count
        assert index._pool is not None
        rel = "pkg03/mod0170.py"
        spec = language_for(rel)
        assert spec is not None
        here = parse_file(tmp_path, rel, spec, Grammars())
        there = found.files[rel]
    assert here.tags is not None
    assert {d.name for d in there.definitions} == {"helper_170", "Thing170"}


def test_a_parser_process_imports_nothing_from_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moot runs in the workspace: started as `python -m`, a parser process had the working
    directory first on its import path, and a repository's `msgspec.py` (or `json.py`, ...) ran
    on the host, unsandboxed and unasked, at the first map of more than `IN_PROCESS_UP_TO`
    files."""
    canary = tmp_path.parent / f"{tmp_path.name}-imported"
    for name in ("msgspec", "json", "struct", "tree_sitter"):
        (tmp_path / f"{name}.py").write_text(f"open({str(canary)!r}, 'a').write({name!r})\n")
    modules(tmp_path, IN_PROCESS_UP_TO + 10)
    monkeypatch.chdir(tmp_path)
    with RepoIndex(tmp_path, background=False) as index:
        found = index.index(seconds=600)
        assert index._pool is not None

    assert not canary.exists(), f"ran on the host: {canary.read_text()}"
    assert found.pending == 0


def test_a_pool_whose_answers_arrive_together_reads_every_one(tmp_path: Path) -> None:
    """The pool waits on its processes' pipes with `select`: answers read ahead into a buffer
    would never wake it, and the parse would hang."""
    modules(tmp_path, 400)
    todo = [(str(p.relative_to(tmp_path)), "python") for p in sorted(tmp_path.rglob("*.py"))]
    pool = ParserPool(tmp_path, size=1)
    answers: list[int] = []

    def parse_all() -> None:
        answers.extend(len(batch) for batch in pool.parse(todo, time.monotonic() + 600))

    worker = threading.Thread(target=parse_all, daemon=True)
    try:
        worker.start()
        worker.join(120)
        assert not worker.is_alive(), "the pool waits for an answer it already read"
        assert sum(answers) == len(todo)
    finally:
        pool.close()


def test_glob_completion_and_the_map_share_the_workspaces_one_file_index(tmp_path: Path) -> None:
    modules(tmp_path, 3)
    ws = Workspace(tmp_path)
    try:
        assert glob_tool(ws)(pattern="**/*.py").content.count(".py") == 3
        assert len(ws.file_listing().files) == 3  # what `Client.files` answers
        first = map_workspace(ws, (), 1024).content
        modules(tmp_path, 5)  # two more files, seen by the next look of each
        assert glob_tool(ws)(pattern="**/*.py").content.count(".py") == 5
        assert "pkg00/mod0004.py" in map_workspace(ws, (), 1024).content
        assert first != ""
        assert ws.file_index().builds == 1
    finally:
        ws.close()
