"""The `hooks` setting: matchers, de-duplication, and errors that name the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.hooks import DEFAULT_TIMEOUT, CommandHook, HookConfigError, parse_hooks
from moot.hooks.config import hooks_from_settings
from moot.settings import SettingsError, load_settings
from trusted import trust_settings


def group(matcher: str | None, *commands: str, **hook: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "hooks": [{"type": "command", "command": c, **hook} for c in commands]
    }
    if matcher is not None:
        raw["matcher"] = matcher
    return raw


def test_matchers_are_regular_expressions_matched_whole_and_ignoring_case() -> None:
    config = parse_hooks(
        {
            "PreToolUse": [
                group("bash|edit", "./guard.sh"),
                group("Write", "./write.sh"),
                group("*", "./all.sh"),
                group(None, "./also-all.sh"),
            ]
        }
    )
    names = lambda tool: [h.command for h in config.commands("PreToolUse", tool)]  # noqa: E731
    assert names("bash") == ["./guard.sh", "./all.sh", "./also-all.sh"]
    assert names("write") == [
        "./write.sh",
        "./all.sh",
        "./also-all.sh",
    ]  # `Write` as others spell it
    assert names("bash_output") == ["./all.sh", "./also-all.sh"]  # fullmatch, not search
    assert config.commands("PostToolUse", "bash") == []


def test_session_start_matches_its_source() -> None:
    config = parse_hooks(
        {"SessionStart": [group("resume", "./again.sh"), group("", "./always.sh")]}
    )
    assert [h.command for h in config.commands("SessionStart", "startup")] == ["./always.sh"]
    assert [h.command for h in config.commands("SessionStart", "resume")] == [
        "./again.sh",
        "./always.sh",
    ]


def test_identical_commands_run_once_and_timeouts_default() -> None:
    config = parse_hooks(
        {"Stop": [group("", "./check.sh", timeout=5), group("", "./check.sh", "./other.sh")]}
    )
    assert config.commands("Stop") == [CommandHook("./check.sh", 5.0), CommandHook("./other.sh")]
    assert CommandHook("x").timeout == DEFAULT_TIMEOUT == 60
    assert not parse_hooks({}) and parse_hooks({"Stop": [group("", "x")]})


@pytest.mark.parametrize(
    ("hooks", "words"),
    [
        ({"PreToolUse": [group("bash(", "x")]}, "hooks.PreToolUse[0].matcher: bad regular expr"),
        ({"BeforeTool": []}, "hooks.BeforeTool: unknown hook event"),
        ({"Stop": {"hooks": []}}, "hooks.Stop: must be a list"),
        ({"Stop": [{"hooks": []}]}, "hooks.Stop[0].hooks: must be a non-empty list"),
        ({"Stop": [group("", "x", type="prompt")]}, "hooks.Stop[0].hooks[0].type"),
        ({"Stop": [group("", "  ")]}, "hooks.Stop[0].hooks[0].command"),
        ({"Stop": [group("", "x", timeout=0)]}, "hooks.Stop[0].hooks[0].timeout"),
        ({"Stop": [group("", "x", timeout="5")]}, "hooks.Stop[0].hooks[0].timeout"),
        ({"Stop": [{"matcher": "", "hooks": [], "when": 1}]}, "unknown keys ['when']"),
    ],
)
def test_bad_hooks_are_clear_errors(hooks: dict[str, object], words: str) -> None:
    with pytest.raises(HookConfigError, match=r"^settings: ") as caught:
        parse_hooks(hooks)
    assert words in str(caught.value)
    assert isinstance(caught.value, SettingsError)  # the CLI's usage error


def test_an_error_names_the_settings_file_it_comes_from(tmp_path: Path) -> None:
    project_settings = tmp_path / ".moot" / "settings.json"
    project_settings.parent.mkdir()
    project_settings.write_text(json.dumps({"hooks": {"PreToolUse": [group("[", "x")]}}))
    trust_settings(tmp_path)
    settings = load_settings(tmp_path)
    with pytest.raises(HookConfigError) as caught:
        hooks_from_settings(settings.hooks, tmp_path)
    assert str(caught.value).startswith(f"{project_settings}: hooks.PreToolUse[0].matcher")


def test_the_workspace_files_hooks_name_are_found(tmp_path: Path) -> None:
    for name in ("check.sh", ".moot/guard.sh", "tools/hook.py", "h.sh", "data.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("#!/bin/sh\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text("x")
    config = parse_hooks(
        {
            "PreToolUse": [group("bash", "./check.sh", "sh .moot/guard.sh # why")],
            "Stop": [group(None, "python3 tools/hook.py --strict", "echo hi > /dev/null")],
            "SessionStart": [group(None, '"$MOOT_PROJECT_DIR"/h.sh', f"sh {outside}")],
            "Notification": [group(None, "CONF=data.txt ./missing.sh", "cat 'unbalanced")],
        }
    )
    assert config.scripts(tmp_path) == (".moot/guard.sh", "check.sh", "data.txt", "h.sh",
                                        "tools/hook.py")  # fmt: skip


def test_a_linked_scriptis_protected_where_it_leads(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "real.sh").write_text("#!/bin/sh\n")
    (tmp_path / "run.sh").symlink_to("scripts/real.sh")
    config = parse_hooks({"Stop": [group(None, "./run.sh")]})
    assert config.scripts(tmp_path) == ("scripts/real.sh",)  # the link itself: see the runner


def test_scripts_are_found_behind_separators_and_inside_quoted_command_lines(
    tmp_path: Path,
) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "check.sh").write_text("#!/bin/sh\n")
    (tmp_path / "tools" / "lint.sh").write_text("#!/bin/sh\n")
    config = parse_hooks(
        {"Stop": [group(None, "tools/check.sh;true", "sh -c './tools/lint.sh && true'")]}
    )
    assert config.scripts(tmp_path) == ("tools/check.sh", "tools/lint.sh")
