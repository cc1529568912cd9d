"""`verify.lint` and `verify.test`: commands the `lint` and `test` tools run, so a repository's
own wait for the person's approval of its settings file, as hooks do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.settings import SettingsError, load_settings
from trusted import trust_settings

VERIFY = {"verify": {"lint": ["ruff check ."], "test": ["pytest -x", "npm test"]}}


def project(tmp_path: Path, data: object, name: str = "settings.json") -> Path:
    (tmp_path / ".moot").mkdir(exist_ok=True)
    (tmp_path / ".moot" / name).write_text(json.dumps(data))
    return tmp_path


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_a_repositorys_verify_commands_are_held_until_approved(tmp_path: Path, name: str) -> None:
    settings = load_settings(project(tmp_path, VERIFY, name))
    assert settings.verify.lint == [] and settings.verify.test == []
    [held] = settings.held
    assert held.grants == (
        "lint and test commands: lint: ruff check ., test: pytest -x, test: npm test",
    )
    trust_settings(tmp_path)
    settings = load_settings(tmp_path)
    assert settings.verify.test == ["pytest -x", "npm test"] and not settings.held


def test_the_verify_keys_are_checked(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="verify"):
        load_settings(project(tmp_path, {"verify": {"tests": ["pytest"]}}))
    with pytest.raises(SettingsError, match="verify"):
        load_settings(project(tmp_path, {"verify": {"test": "pytest"}}))
