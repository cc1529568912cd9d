"""`moot -p` with hooks in a project's `.moot/settings.json`: real processes end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from moot.protocol import events as ev

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


def moot(tmp_path: Path, work: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "write the notes", "--model",
         f"scripted:{tmp_path / 's.yaml'}", "--output-format", "stream-json", *flags],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def project(tmp_path: Path, hooks: dict[str, object]) -> Path:
    (tmp_path / "s.yaml").write_text(SCRIPT)
    work = tmp_path / "work"
    (work / ".moot").mkdir(parents=True)
    (work / ".moot" / "settings.json").write_text(json.dumps({"hooks": hooks}))
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
    done = moot(tmp_path, work, "--permission-mode", "bypassPermissions")
    assert done.returncode == 0, done.stderr
    assert not (work / "notes.txt").exists()
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    (decided,) = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert (decided.approved, decided.by) == (False, "policy")
    assert "Write(notes.txt)" in decided.feedback
