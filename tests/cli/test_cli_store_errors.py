"""Every command that opens the sessions database, on a database it cannot use: one line naming
the file and what to do, exit 1, no traceback, no hang, and nothing written over the file.

Real conditions, not mocks: a damaged file, a read-only file system (bubblewrap binds the
directory read-only, which holds for root too), a full disk (a small tmpfs) and a file size
limit (`RLIMIT_FSIZE`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from small_disk import mounted_small_disk

TIMEOUT = 30  # seconds; a bound for a hung process, never a wait

Moot = Callable[..., subprocess.CompletedProcess[str]]


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "MOOT_HOME": str(home)}
    env.pop("MOOT_MODEL", None)
    return env


def _run(
    tmp_path: Path,
    home: Path,
    *args: str,
    wrap: tuple[str, ...] = (),
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*wrap, sys.executable, "-m", "moot.cli", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(home),
        timeout=TIMEOUT,
        preexec_fn=preexec_fn,
    )


def _script(tmp_path: Path, turns: list[object]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return f"scripted:{path}"


def _one_line(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("moot: ")
    assert result.stderr.count("\n") == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


def _session_of(result: subprocess.CompletedProcess[str]) -> str:
    found = re.search(r"\(session (ses_\w+)", result.stderr)
    assert found, result.stderr
    return found.group(1)


def _digest(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _need_bwrap() -> None:
    """bubblewrap makes the read-only and full file systems; CI must have it."""
    works = shutil.which("bwrap") is not None and (
        subprocess.run(["bwrap", "--dev-bind", "/", "/", "true"], capture_output=True).returncode
        == 0
    )
    if not works:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("bwrap cannot run here; CI must install bubblewrap")
        pytest.skip("bwrap cannot run here (it makes the read-only and full file systems)")


def _a_session(tmp_path: Path, home: Path) -> str:
    done = _run(tmp_path, home, "-p", "hi", "--model", _script(tmp_path, ["hello"]))
    assert done.returncode == 0, done.stderr
    return _run(tmp_path, home, "sessions", "list").stdout.split()[0]


def _every_command(sid: str, model: str) -> list[tuple[str, ...]]:
    return [
        ("-p", "hi", "--model", model),
        ("-p", "more", "--resume", sid, "--model", model),
        ("--resume", sid, "--model", model),
        ("sessions", "list"),
        ("sessions", "show", sid),
        ("sessions", "export", sid, "--format", "json"),
    ]


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_every_command_on_a_damaged_database_says_so_and_leaves_it(
    tmp_path: Path, damage: str
) -> None:
    home = tmp_path / "home"
    sid = _a_session(tmp_path, home)
    db = home / "data" / "sessions.db"
    if damage == "garbage":
        db.write_bytes(os.urandom(50_000))
    else:
        os.truncate(db, 3000)
    before = _digest(home)

    for command in _every_command(sid, _script(tmp_path, ["x"])):
        result = _run(tmp_path, home, *command)
        _one_line(result, str(db), "not a moot sessions database, or is damaged", "mv ")
    assert _digest(home) == before


def test_a_database_from_a_newer_moot_asks_for_an_update(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = _a_session(tmp_path, home)
    db = sqlite3.connect(home / "data" / "sessions.db")
    db.execute("PRAGMA user_version = 99")
    db.close()

    for command in _every_command(sid, _script(tmp_path, ["x"])):
        _one_line(_run(tmp_path, home, *command), "written by a newer moot", "update moot")


def test_a_read_only_moot_home_is_one_line_for_every_command(tmp_path: Path) -> None:
    _need_bwrap()
    home = tmp_path / "home"
    sid = _a_session(tmp_path, home)
    empty = tmp_path / "empty-home"
    empty.mkdir()
    model = _script(tmp_path, ["x"])
    before = _digest(home)

    for directory in (home, empty):
        wrap = ("bwrap", "--dev-bind", "/", "/", "--ro-bind", str(directory), str(directory))
        for command in _every_command(sid, model):
            result = _run(tmp_path, directory, *command, wrap=wrap)
            if directory == empty and command[0] == "sessions":
                # Nothing stored yet, and reading makes nothing: no error to report.
                assert result.returncode in (0, 2), result.stderr
                assert "Traceback" not in result.stderr
                continue
            _one_line(result, str(directory / "data"), "read-only file system", "MOOT_HOME")
    assert _digest(home) == before
    assert list(empty.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a directory whatever its mode says")
def test_a_moot_home_without_write_permission_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _a_session(tmp_path, home)
    (home / "data").chmod(0o555)
    try:
        result = _run(tmp_path, home, "-p", "hi", "--model", _script(tmp_path, ["x"]))
    finally:
        (home / "data").chmod(0o755)
    _one_line(result, str(home / "data"), "MOOT_HOME")


def test_a_disk_that_fills_mid_run_ends_moot_with_one_line(tmp_path: Path) -> None:
    """Before, the run could not record its end and `moot -p` waited for it forever."""
    _need_bwrap()
    home = tmp_path / "home"
    home.mkdir()
    model = _script(tmp_path, [{"text": "x" * 400_000, "chunk_size": 1000}])
    wrap = ("bwrap", "--dev-bind", "/", "/", "--size", str(256 * 1024), "--tmpfs", str(home))

    result = _run(tmp_path, home, "-p", "hi", "--model", model, wrap=wrap)

    _one_line(result, f"cannot write {home / 'data' / 'sessions.db'}: the disk is full")
    assert "(session ses_" in result.stderr


def test_a_file_size_limit_mid_run_loses_nothing_and_resume_finishes_the_run(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    model = _script(tmp_path, [{"text": "x" * 400_000, "chunk_size": 1000}])

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200 * 1024, resource.RLIM_INFINITY))

    limited = _run(tmp_path, home, "-p", "hi", "--model", model, preexec_fn=limit)

    _one_line(limited, "file size limit", str(home / "data" / "sessions.db"))
    sid = _session_of(limited)
    assert f"then `moot --resume {sid}` finishes its run" in limited.stderr
    listed = _run(tmp_path, home, "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    assert "running" in listed.stdout
    resumed = _run(tmp_path, home, "--resume", sid, "--model", model, "--output-format", "json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["output"] == "x" * 400_000


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with mounted_small_disk(tmp_path / "home") as home:
        yield home


def test_a_disk_that_fills_with_shell_output_is_one_line_and_the_run_goes_on_later(
    tmp_path: Path, small_disk: Path
) -> None:
    """A command's output fills the disk while it is recorded: one line, the command stopped,
    what was stored readable, and once there is room `moot --resume` finishes the run without
    running the command again. Fails on the old code: each piece of output that could not be
    recorded was a traceback of the event loop's (44 of them, 1,277 lines), the command ran to
    its end, and only then did moot stop."""
    ran, finished = tmp_path / "ran", tmp_path / "finished"
    command = f"echo >> {ran}; yes 'a line of output' | head -c 20000000; touch {finished}"
    bash = {"name": "bash", "arguments": {"command": command}}
    model = _script(tmp_path, [{"tool_calls": [bash]}, "done after all"])
    allow = ("--model", model, "--permission-mode", "bypassPermissions")
    host = {**_env(small_disk), "MOOT_SANDBOX": "none"}

    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "moot.cli", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=host,
            timeout=TIMEOUT,
        )

    full = moot("-p", "print a lot", *allow)

    assert full.stderr.splitlines()[0].startswith("moot: shell commands run on the host")
    (said,) = full.stderr.splitlines()[1:]
    db = small_disk / "data" / "sessions.db"
    assert said.startswith(f"moot: cannot write {db}: the disk is full; free some space"), said
    assert full.returncode == 1 and "Traceback" not in full.stderr
    assert not finished.exists()  # the command was stopped, not run to its end
    sid = _session_of(full)
    listed = moot("sessions", "list")
    assert listed.returncode == 0 and f"{sid}" in listed.stdout and "running" in listed.stdout
    shown = moot("sessions", "export", sid, "--format", "json")
    kinds = [e["kind"] for e in json.loads(shown.stdout)["events"]]
    assert kinds[:1] == ["turn_started"] and "tool_started" in kinds and "tool_output" in kinds

    subprocess.run(["mount", "-o", "remount,size=64m", small_disk], check=True)  # room again
    resumed = moot("--resume", sid, *allow, "--output-format", "json")

    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["output"] == "done after all"
    assert ran.read_text() == "\n"  # once: a resume never runs a started command again
