"""Every test gets its own MOOT_HOME, and git without the machine's own settings: nothing a test
does lands in the real user directories, and nothing there changes what a test sees. A test
that asks for `server` gets a model server of its own (`model_server.ModelServer`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from model_server import ModelServer


@pytest.fixture(autouse=True)
def private_moot_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("moot-home")
    monkeypatch.setenv("MOOT_HOME", str(home))
    monkeypatch.delenv("MOOT_RESIDENT", raising=False)  # a test asks for a resident moot itself
    return home


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own git settings (signing, hooks, templates) must not leak into tests."""
    config = tmp_path_factory.mktemp("git") / "gitconfig"
    config.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def server() -> Iterator[ModelServer]:
    """A real HTTP server on 127.0.0.1 playing a model API, stopped after the test."""
    with ModelServer() as running:
        yield running
