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
