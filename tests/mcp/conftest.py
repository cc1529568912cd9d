"""What every MCP test starts from: a project directory of its own, where no shell command
runs in a sandbox (the MCP servers are the subject, not bash)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("MOOT_SANDBOX", "none")
    return root
