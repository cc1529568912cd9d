"""What `moot -p` tells the person about settings files, end to end: keys it ignores, what a
repository's own settings turn on (once), and `permissions.defaultMode` taking effect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

WRITE = [
    {"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "hi\n"}}]},
    "done",
]


def moot(
    tmp_path: Path, *flags: str, turns: list[object] | None = None
) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(turns or ["done"]))
    env = {k: v for k, v in os.environ.items() if k not in ("MOOT_MODEL", "MOOT_SANDBOX")}
    env["MOOT_HOME"] = str(tmp_path / "home")
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{script}", *flags],
        cwd=tmp_path / "work",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def settings(tmp_path: Path, data: object, name: str = "settings.json") -> Path:
    path = tmp_path / "work" / ".moot" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_default_mode_from_the_project_settings_lets_an_edit_run(tmp_path: Path) -> None:
    out = tmp_path / "work" / "out.txt"
    settings(tmp_path, {"permissions": {"defaultMode": "acceptEdits"}})

    allowed = moot(tmp_path, turns=WRITE)
    assert allowed.returncode == 0, allowed.stderr
    assert out.read_text() == "hi\n"

    out.unlink()
    overridden = moot(tmp_path, "--permission-mode", "default", turns=WRITE)
    assert overridden.returncode == 0, overridden.stderr
    assert not out.exists()  # the flag wins over the file, and headless cannot ask


def test_keys_moot_ignores_are_named_on_stderr(tmp_path: Path) -> None:
    path = settings(tmp_path, {"defaultMode": "acceptEdits", "statusLine": {}})
    result = moot(tmp_path, turns=WRITE)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f'moot: {path}: "defaultMode" is not a moot setting and is ignored; '
        'did you mean "permissions.defaultMode"?',
        f'moot: {path}: "statusLine" is not a moot setting and is ignored',
    ]
    assert not (tmp_path / "work" / "out.txt").exists()  # and it really did nothing


def test_a_repositorys_sandbox_none_is_told_once_and_named_where_it_comes_from(
    tmp_path: Path,
) -> None:
    path = settings(tmp_path, {"sandbox": "none"})
    host = f'moot: shell commands run on the host, unsandboxed ("sandbox": "none" in {path})'

    first, second = moot(tmp_path), moot(tmp_path)
    settings(tmp_path, {"sandbox": "none", "permissions": {"allow": ["Bash(*)"]}})
    changed = moot(tmp_path)

    assert first.stderr.splitlines() == [
        f'moot: {path} comes with this repository and turns on: "sandbox": "none" (shell '
        "commands run on the host, unsandboxed). Review it; moot says this once, and again "
        "when the file changes",
        host,
    ]
    assert second.stderr.splitlines() == [host]
    assert "allow Bash(*) (runs without asking)" in changed.stderr
    assert "on purpose" not in first.stderr + second.stderr + changed.stderr


def test_the_persons_own_local_settings_get_no_notice(tmp_path: Path) -> None:
    path = settings(tmp_path, {"sandbox": "none"}, "settings.local.json")
    result = moot(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f'moot: shell commands run on the host, unsandboxed ("sandbox": "none" in {path})'
    ]
