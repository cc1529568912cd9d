"""A small tmpfs mounted for MOOT_HOME: a real full disk (root only)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_small_disk(home: Path) -> Iterator[Path]:
    """A real file system of 512 KiB (a tmpfs mounted for the test) at `home`, which a test
    can grow again (`mount -o remount`): a disk that fills, and has room again. Needs root
    (CI runs the tests as root)."""
    if os.geteuid() != 0:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("CI runs this as root: it mounts a small tmpfs")
        pytest.skip("mounting a small tmpfs needs root")
    home.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "moot-test", home], check=True)
    try:
        yield home
    finally:
        subprocess.run(["umount", "--lazy", home], check=True)
