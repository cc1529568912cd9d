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
