"""Where moot's own files and the user's credentials lie from the workspace (`sandbox.private`).

The backends' tests show them hidden for real (`test_sandbox_contract.py`); these pin the
sorting that decides how."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from moot.paths import real_if_there
from moot.sandbox.base import SandboxMasks
from moot.sandbox.private import (
    Placed,
    moot_dirs,
    place,
    private_paths,
    system_secrets,
    with_private,
)


def test_moot_home_and_the_three_directories_under_it_are_private(tmp_path: Path) -> None:
    env = {"MOOT_HOME": str(tmp_path / "mh")}

    assert moot_dirs(env) == [tmp_path / "mh" / name for name in ("data", "config", "cache")] + [
        tmp_path / "mh"
    ]


def test_paths_are_sorted_by_where_they_lie(tmp_path: Path) -> None:
    ws = tmp_path / "home" / "ws"
    (ws / "sub" / ".moot-home").mkdir(parents=True)
    (ws / ".netrc").write_text("x\n")
    (tmp_path / "home" / "other").mkdir()
    (tmp_path / "home" / "note").write_text("x\n")
    os.symlink("/usr", tmp_path / "home" / "link")

    placed = place(
        [str(tmp_path / "home"), str(ws / "sub" / ".moot-home"), str(ws / ".netrc"), "/srv/x"],
        ws,
    )

    assert placed == Placed(
        outside=tuple(
            sorted([str(tmp_path / "home" / "note"), str(tmp_path / "home" / "other"), "/srv/x"])
        ),
        files=(".netrc",),
        dirs=("sub/.moot-home",),
    ), "the holder's entries but the way to the workspace (links left alone)"


def test_a_symlink_is_hidden_where_it_leads(tmp_path: Path) -> None:
    (tmp_path / "dotfiles" / "aws").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    os.symlink(tmp_path / "dotfiles" / "aws", tmp_path / "home" / ".aws")
    os.symlink("/", tmp_path / "home" / ".kube")

    assert private_paths(tmp_path / "home") == [str(tmp_path / "dotfiles" / "aws")]


def test_private_paths_join_the_masks_and_cover_what_lies_inside() -> None:
    masks = SandboxMasks(("mh/data/x", "a.env"), ("mh/cache/d",), ("mh/config/s", "locked"))

    merged = with_private(masks, Placed(dirs=("mh",), files=("b.key",)))

    assert merged == SandboxMasks(("a.env", "b.key"), ("mh",), ("locked",))
    assert with_private(None, Placed(outside=("/x",))) is None


def test_a_real_path_is_the_one_realpath_gives_and_none_where_nothing_is(tmp_path: Path) -> None:
    """`real_if_there` asks the kernel (an `O_PATH` descriptor's name) rather than resolving
    each part in Python: the same answers as `os.path.realpath` then `os.path.exists`."""
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "sub" / "key").write_text("x\n")
    os.symlink(tmp_path / "dir", tmp_path / "to-dir")
    os.symlink("to-dir/sub/key", tmp_path / "chain")  # relative, through another link
    os.symlink(tmp_path / "gone", tmp_path / "dangling")
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    names = ["dir", "to-dir/sub", "chain", "dangling", "loop", "missing", "dir/sub/key"]

    for name in names:
        path = str(tmp_path / name)
        real = os.path.realpath(path)
        assert real_if_there(path) == (real if os.path.exists(real) else None), name
    assert real_if_there(str(tmp_path / "chain")) == str(tmp_path / "dir" / "sub" / "key")


def test_a_host_secret_this_user_cannot_read_needs_no_mask() -> None:
    """What root owns and keeps from others (`/etc/shadow`, the ssh host keys) no command of
    another user can read either (no capability, no set-id program under no-new-privileges):
    bubblewrap is spared a mount for each. Root keeps every one; another user only those the
    modes let it read (or, for a directory, enter). Asked in a child that became `nobody`."""
    import glob  # noqa: F401 - imported here, before the child can no longer read the stdlib
    import json
    import stat

    if os.geteuid() != 0:
        pytest.skip("only root can become another user to ask")
    as_root = system_secrets()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing but system calls and modules already imported
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(write, json.dumps([str(p) for p in system_secrets()]).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        as_nobody = json.loads(answer.read() or b"null")
    os.waitpid(pid, 0)

    def others_may(path: Path) -> bool:
        mode = os.stat(path).st_mode
        return bool(mode & stat.S_IROTH or (stat.S_ISDIR(mode) and mode & stat.S_IXOTH))

    assert as_nobody == [str(p) for p in as_root if others_may(p)]
    if os.path.exists("/etc/shadow"):
        assert Path("/etc/shadow") in as_root and "/etc/shadow" not in as_nobody
