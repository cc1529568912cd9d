"""Settings files: precedence, rule lists adding up, clear errors, saving an allow rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from moot.settings import SettingsError, load_settings, merge, save_local_rule


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_precedence_and_rules_adding_up(tmp_path: Path, private_moot_home: Path) -> None:
    project = tmp_path / "project"
    write(
        private_moot_home / "config" / "settings.json",
        {"model": "anthropic/claude-sonnet-4-5", "permissions": {"allow": ["Bash(git status)"]}},
    )
    write(
        project / ".moot" / "settings.json",
        {
            "model": "openai/gpt-5",
            "sandbox": "docker",
            "permissions": {"deny": ["Read(./.env)"], "defaultMode": "acceptEdits"},
        },
    )
    write(
        project / ".moot" / "settings.local.json",
        {"permissions": {"allow": ["Bash(npm run test:*)", "Bash(git status)"]}},
    )
    settings = load_settings(project)
    assert settings.model == "openai/gpt-5"
    assert settings.sandbox == "docker"
    assert settings.permissions.allow == ["Bash(git status)", "Bash(npm run test:*)"]
    assert settings.permissions.deny == ["Read(./.env)"]
    assert settings.permissions.default_mode == "acceptEdits"


def test_no_files_give_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert (settings.model, settings.sandbox, settings.permissions.allow) == (None, None, [])


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"permissions": {"allow": "Bash"}}', "permissions.allow"),
        ('{"permissions": {"defaultMode": "yolo"}}', "permissions.defaultMode"),
        ('{"sandbox": "chroot"}', "sandbox"),
    ],
)
def test_bad_files_name_themselves(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / ".moot" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(SettingsError, match=words) as caught:
        load_settings(tmp_path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"permissions": {"ask": ["Bash", 3]}}', "permissions.ask[1]: Expected `str`, got `int`"),
        ('{"env": {"A": "1", "B.C": 2}}', "env.B.C: Expected `str`, got `int`"),
        (
            '{"permissions": {"allow": [], "default_mode": "plan"}}',
            "permissions.default_mode: not a known key (it takes allow, ask, deny, defaultMode)",
        ),
        (
            '{"sandbox": "chroot"}',
            "sandbox: Invalid enum value 'chroot'; expected one of auto, bubblewrap, docker, none",
        ),
        ('{"autoCommit": "maybe"}', "autoCommit: Expected `bool | null`, got `str`"),
        ('{"auto_commit": true}', "auto_commit: did you mean autoCommit?"),
    ],
)
def test_a_problem_names_its_key_path(tmp_path: Path, content: str, problem: str) -> None:
    """The path is the one written in the file: list indexes, dictionary keys, aliases."""
    path = tmp_path / ".moot" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path)
    assert str(caught.value) == f"{path}: {problem}"


def test_aliases_are_read_and_unknown_top_level_keys_are_allowed(tmp_path: Path) -> None:
    write(
        tmp_path / ".moot" / "settings.json",
        {"autoCommit": True, "permissions": {"defaultMode": "plan"}, "statusLine": {"x": 1}},
    )
    settings = load_settings(tmp_path)
    assert (settings.auto_commit, settings.permissions.default_mode) == (True, "plan")


def test_merged_settings_that_do_not_fit_are_a_settings_error() -> None:
    with pytest.raises(SettingsError, match=r"^settings: sandbox: Invalid enum value 'chroot'"):
        merge([{"sandbox": "docker"}, {"sandbox": "chroot"}])


def test_an_always_rule_is_saved_locally_and_reloaded(tmp_path: Path) -> None:
    write(tmp_path / ".moot" / "settings.local.json", {"model": "x/y"})
    path = save_local_rule(tmp_path, "allow", "Bash(npm test)")
    save_local_rule(tmp_path, "allow", "Bash(npm test)")
    assert json.loads(path.read_text()) == {
        "model": "x/y",
        "permissions": {"allow": ["Bash(npm test)"]},
    }
    assert (tmp_path / ".moot" / ".gitignore").read_text() == "settings.local.json\n"
    assert load_settings(tmp_path).permissions.allow == ["Bash(npm test)"]


def test_env_merges_by_key() -> None:
    settings = merge([{"env": {"A": "1", "B": "1"}}, {"env": {"B": "2"}}])
    assert settings.env == {"A": "1", "B": "2"}


def test_the_repls_settings_merge_by_key_and_refuse_unknown_keys(tmp_path: Path) -> None:
    settings = merge([{"repl": {"plainOutput": True}}, {"repl": {"toolbar": False}}])
    assert (settings.repl.plain_output, settings.repl.toolbar) == (True, False)
    assert merge([]).repl.toolbar is True

    path = tmp_path / ".moot" / "settings.json"
    write(path, {"repl": {"plain": True}})
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path)
    assert (
        str(caught.value) == f"{path}: repl.plain: not a known key (it takes toolbar, plainOutput)"
    )


def test_hooks_of_each_event_add_up_across_files() -> None:
    user_guard = {"matcher": "bash", "hooks": [{"command": "~/guard.sh"}]}
    project_lint = {"matcher": "write", "hooks": [{"command": "./lint.sh"}]}
    settings = merge(
        [
            {"hooks": {"PreToolUse": [user_guard], "Stop": [user_guard]}},
            {"hooks": {"PreToolUse": [project_lint, user_guard]}},
        ]
    )
    assert settings.hooks == {"PreToolUse": [user_guard, project_lint], "Stop": [user_guard]}


def test_headless_takes_its_model_from_the_project_settings(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "s.yaml").write_text("turns: [from settings]\n")
    write(tmp_path / ".moot" / "settings.json", {"model": f"scripted:{tmp_path / 's.yaml'}"})
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    result = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "hi"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from settings\n"
    (tmp_path / ".moot" / "settings.local.json").write_text('{"sandbox": "chroot"}')
    broken = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "hi"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert broken.returncode == 2
    assert "settings.local.json" in broken.stderr


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("MOOT_HOME", "set it in the shell"),
        ("MOOT_SANDBOX", "use the `sandbox` key"),
        ("MOOT_MODEL", "use the `model` key"),
    ],
)
def test_moots_own_variables_that_act_before_the_settings_are_refused_in_env(
    tmp_path: Path, name: str, says: str
) -> None:
    write(tmp_path / ".moot" / "settings.json", {"env": {name: "x"}})
    with pytest.raises(SettingsError, match=f"env.{name}: .*{re.escape(says)}"):
        load_settings(tmp_path)


def test_session_variables_may_come_from_env_and_an_empty_shell_value_does_not_hide_them(
    tmp_path: Path,
) -> None:
    from moot.client.assemble import session_environ

    write(tmp_path / ".moot" / "settings.json", {"env": {"MOOT_READ_TIMEOUT": "5", "A": "file"}})
    settings = load_settings(tmp_path)
    environ = session_environ(settings, {"A": "", "B": "shell"})
    assert (environ["MOOT_READ_TIMEOUT"], environ["A"], environ["B"]) == ("5", "file", "shell")
    assert session_environ(settings, {"A": "shell"})["A"] == "shell"
