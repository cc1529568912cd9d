"""`moot -p` with hooks in a project's `.moot/settings.json`: real processes end to end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from moot.protocol import events as ev
from trusted import trust_settings

SCRIPT = """\
turns:
  - tool_calls: [{name: write, arguments: {path: notes.txt, content: "from the model"}}]
  - text: done
"""

CHANGE = """\
#!/bin/sh
cat > "$MOOT_PROJECT_DIR/pre-tool-input.json"
echo '{"hookSpecificOutput": {"permissionDecision": "allow",
  "updatedInput": {"path": "notes.txt", "content": "from the hook"}}}'
"""


def moot(
    tmp_path: Path, work: Path, *flags: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"} | (extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "write the notes", "--model",
         f"scripted:{tmp_path / 's.yaml'}", "--output-format", "events", *flags],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def project(tmp_path: Path, hooks: dict[str, object]) -> Path:
    (tmp_path / "s.yaml").write_text(SCRIPT)
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    (work / ".moot" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    trust_settings(work)  # the person's own hooks
    return work


def test_project_hooks_change_a_write_and_add_context(tmp_path: Path) -> None:
    work = project(
        tmp_path,
        {
            "PreToolUse": [{"matcher": "Write", "hooks": [{"command": "sh .moot/change.sh"}]}],
            "UserPromptSubmit": [{"hooks": [{"command": "echo 'house rule: be brief'"}]}],
        },
    )
    (work / ".moot" / "change.sh").write_text(CHANGE)
    done = moot(tmp_path, work, "--permission-mode", "acceptEdits")
    assert done.returncode == 0, done.stderr
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    assert (work / "notes.txt").read_text() == "from the hook"
    sent = json.loads((work / "pre-tool-input.json").read_text())
    assert (sent["tool_name"], sent["tool_input"]["content"]) == ("write", "from the model")
    assert sent["cwd"] == str(work)
    ran = [e for e in events if isinstance(e, ev.HookRan)]
    assert [(h.hook_event, h.decision) for h in ran] == [
        ("UserPromptSubmit", "none"),
        ("PreToolUse", "allow"),
    ]
    assert ran[0].context == "house rule: be brief"
    started = next(e for e in events if isinstance(e, ev.ToolStarted))
    assert started.arguments == {"path": "notes.txt", "content": "from the hook"}


def test_a_bad_hook_setting_is_a_usage_error_naming_the_file(tmp_path: Path) -> None:
    work = project(tmp_path, {"PreToolUse": [{"matcher": "(", "hooks": [{"command": "x"}]}]})
    done = moot(tmp_path, work)
    assert done.returncode == 2
    assert str(work / ".moot" / "settings.json") in done.stderr
    assert "hooks.PreToolUse[0].matcher" in done.stderr


def test_a_hooks_allow_lets_a_headless_run_do_what_would_have_asked(tmp_path: Path) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    work = project(
        tmp_path,
        {
            "PreToolUse": [
                {"matcher": "write", "hooks": [{"command": f"echo '{json.dumps(allow)}'"}]}
            ]
        },
    )
    done = moot(tmp_path, work)  # default mode: a write would ask, and nobody can answer
    assert done.returncode == 0, done.stderr
    assert (work / "notes.txt").read_text() == "from the model"
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    (decided,) = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert (decided.approved, decided.by) == (True, "hook")


def test_a_hooks_allow_never_lifts_a_deny_rule(tmp_path: Path) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    work = project(
        tmp_path,
        {
            "PreToolUse": [
                {"matcher": "write", "hooks": [{"command": f"echo '{json.dumps(allow)}'"}]}
            ]
        },
    )
    settings = json.loads((work / ".moot" / "settings.json").read_text())
    settings["permissions"] = {"deny": ["Write(notes.txt)"]}
    (work / ".moot" / "settings.json").write_text(json.dumps(settings))
    trust_settings(work)
    done = moot(tmp_path, work, "--permission-mode", "bypassPermissions")
    assert done.returncode == 3, done.stderr
    assert not (work / "notes.txt").exists()
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    (decided,) = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert (decided.approved, decided.by) == (False, "policy")
    assert "Write(notes.txt)" in decided.feedback


def test_a_hooks_allow_never_writes_a_protected_path(tmp_path: Path) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    work = project(
        tmp_path,
        {"PreToolUse": [{"matcher": ".*", "hooks": [{"command": f"echo '{json.dumps(allow)}'"}]}]},
    )
    (work / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "s.yaml").write_text(
        "turns:\n"
        "  - tool_calls: [{name: write, arguments: {path: .git/hooks/pre-commit, content: boom}}]\n"
        "  - tool_calls: [{name: write, arguments: {path: .moot/settings.local.json, content: x}}]"
        "\n"
        "  - text: done\n"
    )
    done = moot(tmp_path, work, "--permission-mode", "acceptEdits")
    assert done.returncode == 3, done.stderr
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert not (work / ".moot" / "settings.local.json").exists()
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    decided = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert [(d.approved, d.by) for d in decided] == [(False, "policy"), (False, "policy")]
    assert all("protected path" in d.feedback for d in decided)


def test_a_script_a_hook_runs_cannot_be_rewritten_by_the_model(tmp_path: Path) -> None:
    """Hooks run on the host: the scripts they name are read-only in the sandbox, and a file
    tool's write of one, or a command line that writes one (`>`, `tee`), asks (in a headless
    run: is refused), even in acceptEdits."""
    if shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap is not installed")
    work = project(tmp_path, {"Stop": [{"hooks": [{"command": "./check.sh"}]}]})
    (work / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (work / "check.sh").chmod(0o755)
    (tmp_path / "s.yaml").write_text(
        "turns:\n"
        "  - tool_calls: [{name: bash, arguments: {command: 'chmod -x check.sh'}}]\n"
        "  - tool_calls: [{name: bash, arguments: {command: 'echo id | tee check.sh'}}]\n"
        "  - tool_calls: [{name: bash, arguments: {command: 'echo id > check.sh'}}]\n"
        "  - tool_calls: [{name: write, arguments: {path: check.sh, content: id}}]\n"
        "  - text: done\n"
    )
    env_sandbox = {"MOOT_SANDBOX": "bubblewrap"}
    done = moot(tmp_path, work, "--permission-mode", "acceptEdits",
                "--allowedTools", "Bash(echo:*),Bash(tee:*),Bash(chmod:*)",
                extra_env=env_sandbox)  # fmt: skip
    assert done.returncode == 3, done.stderr  # the writes were refused
    assert (work / "check.sh").read_text() == "#!/bin/sh\nexit 0\n"
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    shell = next(e for e in events if isinstance(e, ev.ToolFinished) and e.tool == "bash")
    assert shell.is_error and "Read-only file system" in shell.content
    refused = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert len(refused) == 3  # tee's file, `>`'s, and the write tool's
    assert all(not r.approved and "protected path check.sh" in r.feedback for r in refused)
