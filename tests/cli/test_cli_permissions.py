"""Permissions in headless runs: what would ask is refused with a clear message; flags and
settings rules decide; a denied tool leaves the model's list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from moot.protocol import events as ev


def run(tmp_path: Path, script: str, *flags: str) -> tuple[int, list[ev.Event]]:
    (tmp_path / "s.yaml").write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "MOOT_MODEL"}
    done = subprocess.run(
        [sys.executable, "-m", "moot.cli", "-p", "go", "--model", f"scripted:{tmp_path / 's.yaml'}",
         "--output-format", "events", *flags],
        cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    events = [ev.event_from_json(line) for line in done.stdout.splitlines()]
    return done.returncode, events


def results(events: list[ev.Event]) -> list[tuple[bool, str]]:
    """What the model heard of each tool call: (is_error, text), a refusal included."""
    heard = []
    for e in events:
        if isinstance(e, ev.ToolFinished):
            heard.append((e.is_error, e.content))
        elif isinstance(e, ev.ApprovalDecided) and not e.approved:
            heard.append((True, e.feedback))
    return heard


EDIT = """\
turns:
  - tool_calls: [{name: read, arguments: {path: notes.txt}}]
  - tool_calls: [{name: edit, arguments: {path: notes.txt, old: wrold, new: world}}]
  - text: done
"""


def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello wrold\n")
    return work


def test_an_edit_that_would_ask_is_refused_and_says_how_to_allow_it(tmp_path: Path) -> None:
    work = workdir(tmp_path)
    code, events = run(tmp_path, EDIT)
    assert code == 3  # completed, with a call refused
    read, edit = results(events)
    assert not read[0]
    assert edit[0]
    assert "cannot ask" in edit[1] and "--allowedTools" in edit[1]
    assert (work / "notes.txt").read_text() == "hello wrold\n"
    refusal = next(e for e in events if isinstance(e, ev.ApprovalDecided))
    assert (refusal.approved, refusal.by) == (False, "policy")


def test_allowed_tools_and_accept_edits_let_the_edit_run(tmp_path: Path) -> None:
    work = workdir(tmp_path)
    code, _ = run(tmp_path, EDIT, "--allowedTools", "Edit(notes.txt)")
    assert code == 0
    assert (work / "notes.txt").read_text() == "hello world\n"


def test_settings_deny_rules_cover_every_path_form(tmp_path: Path) -> None:
    work = workdir(tmp_path)
    (work / ".env").write_text("SECRET=1\n")
    (work / ".moot").mkdir()
    (work / ".moot" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)"]}})
    )
    script = """\
turns:
  - tool_calls:
      - {name: read, arguments: {path: .env}}
      - {name: read, arguments: {path: ./src/../.env}}
  - text: done
"""
    (work / "src").mkdir()
    _, events = run(tmp_path, script, "--permission-mode", "bypassPermissions")
    assert [error for error, _ in results(events)] == [True, True]
    assert all("SECRET" not in text and "Read(./.env)" in text for _, text in results(events))


def test_a_bare_deny_removes_the_tool(tmp_path: Path) -> None:
    workdir(tmp_path)
    script = (
        "turns:\n  - tool_calls: [{name: web_fetch, arguments: {url: 'http://x'}}]\n  - text: ok\n"
    )
    _, events = run(tmp_path, script, "--disallowedTools", "WebFetch")
    ((error, text),) = results(events)
    assert error and "WebFetch" in text


def test_a_compound_command_needs_every_part_allowed(tmp_path: Path) -> None:
    work = workdir(tmp_path)
    (work / "build").mkdir()
    script = """\
turns:
  - tool_calls: [{name: bash, arguments: {command: "git status && rm -rf build"}}]
  - text: ok
"""
    _, events = run(tmp_path, script, "--allowedTools", "Bash(git status:*)")
    ((error, text),) = results(events)
    assert error and "cannot ask" in text
    assert (work / "build").is_dir()


def test_bad_rules_and_modes_are_usage_errors(tmp_path: Path) -> None:
    workdir(tmp_path)
    code, _ = run(tmp_path, "turns: [x]\n", "--allowedTools", "Bash(git status")
    assert code == 2
    code, _ = run(tmp_path, "turns: [x]\n", "--permission-mode", "yolo")
    assert code == 2


def test_a_refusal_is_told_on_stderr_listed_in_the_json_result_and_in_the_exit_status(
    tmp_path: Path,
) -> None:
    """Issue 29, item 3: a refused edit printed `Done.` and exited 0 with nothing on stderr."""
    import os
    import subprocess
    import sys

    work = workdir(tmp_path)
    script = tmp_path / "edit.json"
    script.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
                {
                    "tool_calls": [
                        {
                            "name": "edit",
                            "arguments": {"path": "notes.txt", "old": "wrold", "new": "world"},
                        }
                    ]
                },
                "Done.",
            ]
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MOOT_MODEL",)}
    base = [sys.executable, "-m", "moot.cli", "-p", "fix it", "--model", f"scripted:{script}"]

    def moot(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *flags], cwd=work, env=env, capture_output=True, text=True, timeout=60
        )

    text = moot()
    assert text.returncode == 3
    assert text.stdout == "Done.\n"
    lines = text.stderr.splitlines()
    assert lines[0].startswith("moot: refused edit: edit needs approval in permission mode")
    assert '--allowedTools "Edit(./notes.txt)"' in lines[0]
    assert lines[1].startswith("moot: 1 tool call refused (exit 3); session ses_")

    result = json.loads(moot("--output-format", "json").stdout)
    (denial,) = result["permission_denials"]
    assert denial["tool_name"] == "edit"
    assert denial["tool_input"] == {"path": "notes.txt", "old": "wrold", "new": "world"}
    assert denial["tool_use_id"] and "needs approval" in denial["reason"]

    allowed = moot("--allowedTools", "Edit(notes.txt)", "--output-format", "json")
    assert allowed.returncode == 0
    assert json.loads(allowed.stdout)["permission_denials"] == []
    assert "refused" not in allowed.stderr
