"""What the command-line tests share: `moot`, run in the test's directory (`moot_cli`), and a
resident moot of the test's own (`resident_harness`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from moot_cli import RunMoot, moot_in
from resident_harness import (  # noqa: F401 (fixtures)
    pty_resident,
    resident,
    runtime,
    tmux_resident,
)


@pytest.fixture
def moot(tmp_path: Path) -> RunMoot:
    """Run `moot ARGS` in `tmp_path` with MOOT_HOME under it and MOOT_MODEL unset."""
    return moot_in(tmp_path)
