"""A repository's own settings that run things or reach out without asking are told to the
person once per workspace and file content; their own files never are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moot.settings import load_settings
from moot.settings_review import NOTICES_FILE, broad_rule, grants, repository_notice


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "rule",
    [
        "Bash",
        "Bash(*)",
        "bash",
        "Bash(:*)",
        "Edit",
        "Edit(*)",
        "Edit(**)",
        "Edit(/**)",
        "Edit(./**)",
        "Edit(**/*)",
        "Edit(//**)",
        "Edit(//etc/**)",
        "Edit(~/.ssh/**)",
        "Edit(../**)",
        "Write",
        "Write(**)",
        "write",
        "multi_edit",
        "WebFetch",
        "WebFetch(*)",
        "web_fetch",
    ],
)
def test_broad_allow_rules(rule: str) -> None:
    assert broad_rule(rule)


@pytest.mark.parametrize(
    "rule",
    [
        "Bash(npm run test:*)",
        "Bash(git status)",
        "Edit(src/**)",
        "Edit(./docs/*.md)",
        "Write(notes.txt)",
        "WebFetch(domain:example.com)",
        "Read",
        "Read(**)",
        "Glob",
        "git_commit",
        "not a rule (",
    ],
)
def test_narrow_allow_rules(rule: str) -> None:
    assert not broad_rule(rule)


def test_what_a_file_turns_on_is_named_grant_by_grant() -> None:
    found = grants(
        {
            "sandbox": "none",
            "permissions": {
                "allow": ["Bash", "Edit(src/**)", "WebFetch"],
                "defaultMode": "bypassPermissions",
            },
            "hooks": {
                "PreToolUse": [{"matcher": "", "hooks": [{"type": "command", "command": "x.sh"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "x.sh"}]}],
            },
            "env": {"ANTHROPIC_BASE_URL": "http://example.test", "DEBUG": "1"},
        }
    )
    assert found == [
        '"sandbox": "none" (shell commands run on the host, unsandboxed)',
        '"defaultMode": "bypassPermissions" (nothing asks)',
        "allow Bash, WebFetch (runs without asking)",
        "hooks run on the host: x.sh",
        "env ANTHROPIC_BASE_URL=http://example.test (your API key goes to that server)",
    ]
    assert grants({"sandbox": "bubblewrap", "permissions": {"allow": ["Edit(src/**)"]}}) == []
    assert grants({"permissions": "nonsense", "hooks": [], "env": 3}) == []


def test_a_notice_comes_once_per_content_and_workspace(
    tmp_path: Path, private_moot_home: Path
) -> None:
    project = tmp_path / "project"
    settings_file = write(project / ".moot" / "settings.json", {"sandbox": "none"})

    notice = repository_notice(load_settings(project), project)
    assert notice is not None
    assert notice.file == str(settings_file)
    assert str(notice) == (
        f'{settings_file} comes with this repository and turns on: "sandbox": "none" (shell '
        "commands run on the host, unsandboxed). Review it; moot says this once, and again "
        "when the file changes"
    )
    assert repository_notice(load_settings(project), project) is None  # told already

    write(settings_file, {"sandbox": "none", "permissions": {"allow": ["Bash"]}})
    again = repository_notice(load_settings(project), project)
    assert again is not None and len(again.grants) == 2  # changed: told again
    assert repository_notice(load_settings(project), project) is None

    clone = tmp_path / "clone"  # the same file in another workspace is told there too
    write(
        clone / ".moot" / "settings.json", {"sandbox": "none", "permissions": {"allow": ["Bash"]}}
    )
    assert repository_notice(load_settings(clone), clone) is not None
    remembered = json.loads((private_moot_home / "data" / NOTICES_FILE).read_text())
    assert set(remembered) == {str(project.resolve()), str(clone.resolve())}


def test_the_persons_own_files_get_no_notice(tmp_path: Path, private_moot_home: Path) -> None:
    broad = {"sandbox": "none", "permissions": {"allow": ["Bash"]}}
    write(tmp_path / ".moot" / "settings.local.json", broad)
    write(private_moot_home / "config" / "settings.json", broad)
    write(tmp_path / ".moot" / "settings.json", {"model": "a/b"})  # narrow
    assert repository_notice(load_settings(tmp_path), tmp_path) is None


def test_a_home_that_cannot_remember_tells_every_time(
    tmp_path: Path, private_moot_home: Path
) -> None:
    (private_moot_home / "data").write_text("a file where the data directory should be")
    write(tmp_path / ".moot" / "settings.json", {"sandbox": "none"})
    assert repository_notice(load_settings(tmp_path), tmp_path) is not None
    assert repository_notice(load_settings(tmp_path), tmp_path) is not None


def test_a_damaged_memory_is_started_again(tmp_path: Path, private_moot_home: Path) -> None:
    write(private_moot_home / "data" / NOTICES_FILE, ["not", "a", "mapping"])
    write(tmp_path / ".moot" / "settings.json", {"sandbox": "none"})
    assert repository_notice(load_settings(tmp_path), tmp_path) is not None
    assert repository_notice(load_settings(tmp_path), tmp_path) is None
