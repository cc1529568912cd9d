"""`sandbox.set_id`: which set-id bits the sweep clears after a command, and which it leaves.

The backends show it for real (`test_sandbox_contract.py`: nothing set-id is left on the
host, by Docker's sweep or bubblewrap's filter)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from moot.sandbox import set_id
from moot.sandbox.set_id import SetIdSweep, clear_set_id


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_what_changed_since_is_cleared_and_nothing_else(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "deep" / "er").mkdir(parents=True)
    outside.mkdir()
    old = ws / "old-tool"
    old.write_text("")
    os.chmod(old, 0o4755)
    since = time.time_ns() + 10**9 * 3600  # pretend the command started later
    assert clear_set_id(ws, since) == [], "changed before the command began: the user's own"
    target = outside / "theirs"
    target.write_text("")
    os.chmod(target, 0o4755)
    os.symlink(target, ws / "link")
    (ws / "shared").mkdir()
    os.chmod(ws / "shared", 0o2775)
    for rel, bits in (("new", 0o4755), ("deep/er/g", 0o2711), ("both", 0o6700)):
        (ws / rel).write_text("")
        os.chmod(ws / rel, bits)

    cleared = clear_set_id(ws, 0)

    assert sorted(cleared) == ["both", "deep/er/g", "new", "old-tool"]
    assert [mode(ws / p) for p in ("new", "deep/er/g", "both")] == [0o755, 0o711, 0o700]
    assert mode(target) == 0o4755, "a link is not followed"
    assert mode(ws / "shared") == 0o2775, "a set-group-ID directory grants nothing"


def test_a_set_id_file_in_a_locked_directory_is_cleared_whenever_it_was_made(
    tmp_path: Path,
) -> None:
    """Second attack on issue 28, unprivileged under Docker: `mkdir d; cp sh d/x; chmod 4755
    d/x; chmod 000 d` hid `x` from the sweep (it could not read `d`), and a later command's
    `chmod 755 d` showed it to every user of the machine, its status older than that command,
    so no sweep ever cleared it. The locked directory is opened and swept whole."""
    ws = tmp_path / "ws"
    (ws / "d" / "e").mkdir(parents=True)
    for rel in ("d/x", "d/e/y"):
        (ws / rel).write_text("")
        os.chmod(ws / rel, 0o4755)
    os.chmod(ws / "d" / "e", 0o000)
    os.chmod(ws / "d", 0o000)
    later = time.time_ns() + 10**9 * 3600  # the command that unlocks it began later

    assert sorted(clear_set_id(ws, later)) == ["d/e/y", "d/x"]
    assert mode(ws / "d" / "x") == 0o755 and mode(ws / "d" / "e" / "y") == 0o755
    assert mode(ws / "d") == 0o500  # its owner may read it again; nobody else


def test_more_directories_than_open_files_hide_nothing(tmp_path: Path) -> None:
    """Second attack on issue 28: the sweep held a descriptor for every directory waiting its
    turn, so 1500 directories (over the usual limit of 1024 open files) hid the set-id files
    of the last ones."""
    import resource

    ws = tmp_path / "ws"
    ws.mkdir()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wide = 300
    for i in range(wide):
        (ws / f"d{i:04}").mkdir()
    for i in (0, wide // 2, wide - 1):
        (ws / f"d{i:04}" / "x").write_text("")
        os.chmod(ws / f"d{i:04}" / "x", 0o4755)
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))
    try:
        cleared = clear_set_id(ws, 0)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert sorted(cleared) == [f"d{i:04}/x" for i in (0, wide // 2, wide - 1)]


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a file to another user")
def test_another_users_file_is_left_alone(tmp_path: Path) -> None:
    """A command holds no capability: it can set bits only on files of moot's user."""
    theirs = tmp_path / "theirs"
    theirs.write_text("")
    os.chown(theirs, 65534, 65534)
    os.chmod(theirs, 0o4755)

    assert clear_set_id(tmp_path, 0) == []
    assert mode(theirs) == 0o4755


async def test_a_sweep_covers_what_a_command_still_running_began_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background command that began first may have set bits since its own start: the
    sweep after a later command reaches back to it."""
    sweep = SetIdSweep(tmp_path)
    background = sweep.begin()
    made = tmp_path / "made"
    made.write_text("")
    os.chmod(made, 0o4755)
    monkeypatch.setattr(set_id, "SLACK_NS", -(10**9) * 3600)  # "began" an hour from now
    foreground = sweep.begin()
    alone = SetIdSweep(tmp_path)

    assert await alone.end(alone.begin()) == [], "the later command alone would miss it"
    assert await sweep.end(foreground) == ["made"]
    assert await sweep.end(background) == []
