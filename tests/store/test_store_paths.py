"""Where moot keeps its files (`moot.paths`), with and without `MOOT_HOME`."""

from __future__ import annotations

from pathlib import Path

import platformdirs
import pytest

from moot import paths


def test_moot_home_holds_all_three(tmp_path: Path) -> None:
    env = {"MOOT_HOME": str(tmp_path)}
    assert paths.data_dir(env) == tmp_path / "data"
    assert paths.config_dir(env) == tmp_path / "config"
    assert paths.cache_dir(env) == tmp_path / "cache"
    assert paths.default_db_path(env) == tmp_path / "data" / "sessions.db"


def test_moot_home_from_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOOT_HOME", str(tmp_path))
    assert paths.default_db_path() == tmp_path / "data" / "sessions.db"


def test_moot_home_expands_the_user_directory() -> None:
    env = {"MOOT_HOME": "~/portable", "HOME": "/somewhere"}
    assert paths.data_dir(env) == Path("~/portable").expanduser() / "data"


@pytest.mark.parametrize("env", [{}, {"MOOT_HOME": ""}], ids=["unset", "empty"])
def test_platform_directories_without_moot_home(env: dict[str, str]) -> None:
    assert paths.data_dir(env) == Path(platformdirs.user_data_dir("moot", appauthor=False))
    assert paths.config_dir(env) == Path(platformdirs.user_config_dir("moot", appauthor=False))
    assert paths.cache_dir(env) == Path(platformdirs.user_cache_dir("moot", appauthor=False))
    assert paths.default_db_path(env).name == "sessions.db"


# ---- what moot writes under its data directory is this user's only ---------------------------


def _modes(root: Path) -> dict[str, str]:
    """Each path under `root` (itself included) and its permission bits, in octal."""
    import stat

    found = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for path in sorted(root.rglob("*")):
        found[str(path.relative_to(root))] = oct(stat.S_IMODE(path.lstat().st_mode))
    return found


def _moot(tmp_path: Path, *args: str) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "MOOT_SANDBOX": "none"}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", *args],
        cwd=tmp_path / "work",
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.umask(0o022),  # the usual umask: 0644 files, 0755 directories
    )
    assert done.returncode == 0, done.stderr


def _print_a_lot(tmp_path: Path) -> tuple[str, ...]:
    import json

    command = "yes 'a line of output' | head -c 100000"  # past the cap: kept whole in a file
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps([{"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}, "ok"])
    )
    return ("--model", f"scripted:{script}", "--permission-mode", "bypassPermissions")


def test_everything_moot_writes_under_its_data_directory_is_this_users_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Transcripts, command output and snapshots hold what the model read: every directory
    moot makes there is 0700 and every file 0600, whatever the umask (the sessions database
    and SQLite's -wal and -shm files, the locks, saved command output, the prompt history).
    Fails on the old code: `sessions.db` was 0644 and `~/.local/share/moot` 0755."""
    from moot.frontend.history import PromptHistory, history_file
    from moot.store import open_store

    (tmp_path / "work").mkdir()
    model = _print_a_lot(tmp_path)
    _moot(tmp_path, "-p", "print a lot", *model)
    monkeypatch.setenv("MOOT_HOME", str(tmp_path / "home"))
    PromptHistory(history_file(tmp_path / "work")).add("a message")

    with open_store():  # SQLite's -wal and -shm files exist while the database is open
        modes = _modes(tmp_path / "home")

    data = {p: m for p, m in modes.items() if p == "data" or p.startswith("data/")}
    kinds = {p.split("/")[1] if "/" in p else p for p in data}
    assert {"sessions.db", "sessions.db-wal", "sessions.db-shm", "sessions.db-locks"} <= kinds
    assert {"outputs", "history"} <= kinds
    assert [p for p in data if p.startswith("data/outputs/") and p.endswith(".txt")]
    directories = {p for p in data if (tmp_path / "home" / p).is_dir()}
    assert {p: m for p, m in data.items() if p in directories and m != "0o700"} == {}
    assert {p: m for p, m in data.items() if p not in directories and m != "0o600"} == {}
    assert modes["."] == "0o700"  # MOOT_HOME itself, made by moot


def test_a_data_directory_an_older_moot_made_open_is_closed(tmp_path: Path) -> None:
    """A data directory made 0755, with a 0644 database and side files (an older moot, or one
    killed with its -wal and -shm files left): the next moot takes group and other access away."""
    from moot.store.sqlite import SQLiteStore

    (tmp_path / "work").mkdir()
    _moot(tmp_path, "-p", "first", *_print_a_lot(tmp_path))
    data = tmp_path / "home" / "data"
    with SQLiteStore(data / "sessions.db"):  # its -wal and -shm files stay while it is open
        for path in (data, *data.glob("sessions.db*")):
            path.chmod(0o755 if path.is_dir() else 0o644)

        _moot(tmp_path, "sessions", "list")

        modes = _modes(data)
    assert modes["."] == "0o700"
    assert {p: modes[p] for p in ("sessions.db", "sessions.db-wal", "sessions.db-shm")} == {
        "sessions.db": "0o600",
        "sessions.db-wal": "0o600",
        "sessions.db-shm": "0o600",
    }
