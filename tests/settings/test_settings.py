"""Settings files: precedence, rule lists adding up, clear errors, saving an allow rule."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from moot.settings import (
    MAX_FILE_BYTES,
    SettingsError,
    approve_held,
    load_settings,
    merge,
    print_warnings,
    save_allowed_domain,
    save_local_rule,
)


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
    approve_held(project)  # the person's approval: the files are theirs
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
            "permissions.default_mode: not a known key (it takes allow, ask, deny, defaultMode)"
            "; did you mean defaultMode?",
        ),
        (
            '{"sandbox": "chroot"}',
            "sandbox: Invalid enum value 'chroot'; expected one of auto, bubblewrap, landlock,"
            " seatbelt,"
            " docker, none",
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
    approve_held(tmp_path)  # the person's approval: the files are theirs
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
        str(caught.value)
        == f"{path}: repl.plain: not a known key (it takes toolbar, plainOutput); "
        "did you mean plainOutput?"
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
    from moot.client.environment import session_environ

    write(tmp_path / ".moot" / "settings.json", {"env": {"MOOT_READ_TIMEOUT": "5", "A": "file"}})
    approve_held(tmp_path)  # the person's approval: the files are theirs
    settings = load_settings(tmp_path)
    environ = session_environ(settings, {"A": "", "B": "shell"})
    assert (environ["MOOT_READ_TIMEOUT"], environ["A"], environ["B"]) == ("5", "file", "shell")
    assert session_environ(settings, {"A": "shell"})["A"] == "shell"


# ---- keys moot does not read: warnings, not errors, not silence ------------------------------


def test_unknown_top_level_keys_are_warnings_naming_the_file_the_key_and_the_nearest(
    tmp_path: Path, private_moot_home: Path
) -> None:
    user = private_moot_home / "config" / "settings.json"
    write(user, {"modle": "x/y"})
    project = tmp_path / ".moot" / "settings.json"
    write(
        project,
        {
            "$schema": "https://example.com/settings.schema.json",
            "defaultMode": "acceptEdits",
            "permisions": {"allow": ["Read"]},
            "allow": ["Bash"],
            "statusLine": {"type": "command"},
            "model": "a/b",
        },
    )

    settings = load_settings(tmp_path)

    assert [(w.file, w.key, w.suggestion) for w in settings.warnings] == [
        (str(user), "modle", "model"),
        (str(project), "defaultMode", "permissions.defaultMode"),
        (str(project), "permisions", "permissions"),
        (str(project), "allow", "permissions.allow"),
        (str(project), "statusLine", None),
    ]
    assert str(settings.warnings[1]) == (
        f'{project}: "defaultMode" is not a moot setting and is ignored; '
        'did you mean "permissions.defaultMode"?'
    )
    assert (
        str(settings.warnings[4]) == f'{project}: "statusLine" is not a moot setting and is ignored'
    )
    assert settings.model == "a/b"


def test_a_warning_is_printed_once_per_file_and_key_in_a_process(tmp_path: Path) -> None:
    write(tmp_path / ".moot" / "settings.json", {"sandbx": "none", "statusLine": 1})
    out = io.StringIO()
    print_warnings(load_settings(tmp_path).warnings, out)
    print_warnings(load_settings(tmp_path).warnings, out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("moot: ") and '"sandbx"' in lines[0] and '"sandbox"' in lines[0]


def test_settings_know_which_file_gave_each_value(tmp_path: Path, private_moot_home: Path) -> None:
    user = private_moot_home / "config" / "settings.json"
    write(user, {"model": "a/b", "sandbox": "docker", "permissions": {"defaultMode": "plan"}})
    local = tmp_path / ".moot" / "settings.local.json"
    write(local, {"sandbox": "none"})
    approve_held(tmp_path)  # the person's approval: the files are theirs
    settings = load_settings(tmp_path)
    assert settings.origins == {
        "model": str(user),
        "sandbox": str(local),
        "permissions.defaultMode": str(user),
    }
    assert settings.held == ()


# ---- files a repository can make anything of -------------------------------------------------


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p.write_bytes(b'{"model": "caf\xe9/x"}'), "is not UTF-8 text"),
        (lambda p: p.mkdir(), "it is a directory"),
        (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
        (lambda p: p.write_bytes(b" " * (MAX_FILE_BYTES + 1) + b"{}"), "larger than 1 MiB"),
        (lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    ],
    ids=["latin-1", "directory", "dev-zero", "huge", "deep"],
)
def test_a_settings_file_that_is_no_settings_file_is_an_error_naming_it(
    tmp_path: Path, make: Callable[[Path], object], words: str
) -> None:
    path = tmp_path / ".moot" / "settings.json"
    path.parent.mkdir()
    make(path)
    with pytest.raises(SettingsError, match=words) as caught:
        load_settings(tmp_path)
    assert str(path) in str(caught.value)


def test_a_fifo_for_a_settings_file_is_refused_at_once(tmp_path: Path) -> None:
    """Opening a FIFO waits for a writer: in a subprocess, so the old code fails, not hangs."""
    (tmp_path / ".moot").mkdir()
    os.mkfifo(tmp_path / ".moot" / "settings.json")
    code = (
        "import pathlib, sys\n"
        "from moot.settings import SettingsError, load_settings\n"
        "try:\n"
        "    load_settings(pathlib.Path(sys.argv[1]))\n"
        "except SettingsError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=30
    )
    assert (
        done.stdout
        == f"cannot read {tmp_path / '.moot' / 'settings.json'}: it is not a regular file\n"
    )


def test_saving_a_rule_writes_through_no_link_the_repository_planted(tmp_path: Path) -> None:
    victim, elsewhere = tmp_path / "victim.txt", tmp_path / "elsewhere"
    victim.write_text("precious\n")
    project = tmp_path / "project"
    (project / ".moot").mkdir(parents=True)
    (project / ".moot" / "settings.local.tmp").symlink_to(victim)  # the old temporary name
    (project / ".moot" / ".gitignore").symlink_to(elsewhere)  # dangling (moot writes none now)

    path = save_local_rule(project, "allow", "Bash(make:*)")

    assert victim.read_text() == "precious\n"
    assert not elsewhere.exists()
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(make:*)"]}}
    assert not path.is_symlink()
    assert sorted(p.name for p in path.parent.iterdir()) == [
        ".gitignore",
        "settings.local.json",
        "settings.local.tmp",
    ]


@pytest.mark.parametrize("what", ["rule", "domain"])
def test_saving_a_rule_or_a_domain_through_a_symlinked_moot_directory_is_refused(
    tmp_path: Path, what: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    (project / ".moot").symlink_to(outside)

    def save() -> None:
        if what == "rule":
            save_local_rule(project, "allow", "Bash(make:*)")
        else:
            save_allowed_domain(project, "pypi.org")

    with pytest.raises(SettingsError, match="is a symlink"):
        save()
    assert list(outside.iterdir()) == []


def test_the_apps_terminal_options_merge_by_key_and_bad_ones_name_themselves(
    tmp_path: Path, private_moot_home: Path
) -> None:
    assert load_settings(tmp_path).ui.alt_screen is True
    write(private_moot_home / "config" / "settings.json", {"ui": {"mouse": False}})
    write(tmp_path / ".moot" / "settings.json", {"ui": {"altScreen": False}})
    ui = load_settings(tmp_path).ui
    assert (ui.alt_screen, ui.mouse, ui.scrollback) == (False, False, "auto")
    write(tmp_path / ".moot" / "settings.json", {"ui": {"scrollback": "html"}})
    with pytest.raises(SettingsError, match=r"ui.scrollback: .*auto, off, text, markdown"):
        load_settings(tmp_path)
    write(tmp_path / ".moot" / "settings.json", {"ui": {"alt_screen": False}})
    with pytest.raises(SettingsError, match=r"ui.alt_screen: not a known key \(it takes altScreen"):
        load_settings(tmp_path)


def test_one_user_setting_is_saved_keeping_the_others(private_moot_home: Path) -> None:
    from moot.settings import save_user_setting

    path = private_moot_home / "config" / "settings.json"
    write(path, {"sandbox": "none", "otherAgent": {"x": 1}})
    assert save_user_setting("model", "openai/gpt-5") == path
    assert json.loads(path.read_text()) == {
        "sandbox": "none",
        "otherAgent": {"x": 1},
        "model": "openai/gpt-5",
    }
    with pytest.raises(SettingsError, match="sandbox"):
        save_user_setting("sandbox", "nowhere")
    assert json.loads(path.read_text())["sandbox"] == "none"  # nothing written


def git_repo(path: Path) -> Path:
    import subprocess

    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    return path


def test_an_always_rule_keeps_its_file_out_of_git_without_a_file_git_shows(
    tmp_path: Path,
) -> None:
    """Issue 29, item 9: the `.moot/.gitignore` moot wrote showed as `?? .moot/` itself."""
    import subprocess

    project = git_repo(tmp_path / "project")
    save_local_rule(project, "allow", "Bash(make:*)")
    save_local_rule(project, "allow", "Bash(npm test:*)")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert status == ""
    assert not (project / ".moot" / ".gitignore").exists()
    exclude = (project / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.moot/settings.local.json") == 1

    plain = tmp_path / "not-a-repository"  # nothing of git's is made
    save_local_rule(plain, "allow", "Bash(make:*)")
    assert sorted(p.name for p in (plain / ".moot").iterdir()) == ["settings.local.json"]
    assert not (plain / ".git").exists()


def test_the_exclude_line_is_never_written_through_a_link(tmp_path: Path) -> None:
    project = git_repo(tmp_path / "project")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    info = project / ".git" / "info"
    for child in info.iterdir():
        child.unlink()
    info.rmdir()
    info.symlink_to(elsewhere)  # a repository that came as a tarball may hold anything
    save_local_rule(project, "allow", "Bash(make:*)")
    assert list(elsewhere.iterdir()) == []

    other = git_repo(tmp_path / "other")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (other / ".git" / "info" / "exclude").unlink()
    (other / ".git" / "info" / "exclude").symlink_to(victim)
    save_local_rule(other, "allow", "Bash(make:*)")
    assert victim.read_text() == "precious\n"
