"""Every test gets its own MOOT_HOME: nothing a test does lands in the real user directories."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def private_moot_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("moot-home")
    monkeypatch.setenv("MOOT_HOME", str(home))
    return home
