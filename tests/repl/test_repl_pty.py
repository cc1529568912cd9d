"""The plain REPL end to end through a pseudo-terminal (pexpect): `moot --plain` with the
scripted provider in a temporary git repository; a task typed, its edit approved with `y`, the
file changed on disk, a slash command, quit. And `moot` on a dumb terminal: the REPL, plain,
with not one escape sequence, where ctrl+c (a signal there) stops a running turn.

Nothing sleeps to wait: every wait is pexpect's bounded `expect` on what the REPL prints.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from moot.frontend.history import history_file
from pty_moot import in_terminal, terminal_env

EDIT_SCRIPT = """\
turns:
  - text: "Let me look at the file.\\n"
    tool_calls:
      - {name: read, arguments: {path: greeting.py}}
  - text: "Changing the greeting.\\n"
    tool_calls:
      - {name: edit, arguments: {path: greeting.py, old: "hi ", new: "hello, "}}
  - text: "Done: greet now says **hello**.\\n"
"""
SLOW_LINES = "".join(f"line {i} of a slow answer\\n" for i in range(200))
SLOW_SCRIPT = f'turns:\n  - {{text: "{SLOW_LINES}", rate: 40, chunk_size: 4}}\n'

MOOT = Path(sys.executable).parent / "moot"


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "greeting.py").write_text('def greet(name):\n    return "hi " + name\n')
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    return repo


def spawn(
    tmp_path: Path, repo: Path, script: str, *args: str, term: str, no_color: bool = False
) -> pexpect.spawn:
    path = tmp_path / "script.yaml"
    path.write_text(script)
    env = terminal_env(tmp_path, term=term)
    if no_color:
        env["NO_COLOR"] = "1"
    return in_terminal(str(MOOT), [*args, "--model", f"scripted:{path}"], repo, env)


def answer_until_taken(child: pexpect.spawn, key: str, taken: str) -> None:
    """Press `key` until the REPL takes it: a key counts only after a pause (none within the
    grace interval before it, the question's appearing included), so each try waits (boundedly,
    longer than that interval) for the answer to show."""
    end = time.monotonic() + 20
    while True:
        child.send(key)
        try:
            child.expect_exact(taken, timeout=0.6)
            return
        except pexpect.TIMEOUT:
            assert time.monotonic() < end, child.before


def test_a_task_typed_approved_with_y_then_a_command_and_quit(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    child = spawn(tmp_path, repo, EDIT_SCRIPT, "--plain", term="xterm-256color")
    try:
        child.expect_exact("moot plain REPL")
        child.expect_exact("ctrl+d quits")
        child.send("make greet say hello\r")
        child.expect_exact("moot asks to run edit")
        child.expect_exact("answer [y/s/a/n]: ")
        assert "hi " in (repo / "greeting.py").read_text()  # nothing changed before the answer

        answer_until_taken(child, "y", "allowed by you")
        child.expect_exact("greet now says")
        assert (repo / "greeting.py").read_text() == (
            'def greet(name):\n    return "hello, " + name\n'
        )

        child.send("/status\r")
        child.expect_exact("sandbox  ")
        child.send("\x04")  # ctrl+d at the empty prompt
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_moot_on_a_dumb_terminal_is_the_plain_repl_and_ctrl_c_stops_a_turn(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path)
    child = spawn(tmp_path, repo, SLOW_SCRIPT, term="dumb")
    child.logfile_read = screen = io.StringIO()
    try:
        child.expect_exact("moot plain REPL (TERM=dumb)")
        child.expect_exact("> ")
        child.send("go\r")
        child.expect_exact("line 2 of a slow answer")
        child.sendintr()  # ctrl+c: the terminal is in its normal mode while a turn runs
        child.expect_exact("turn cancelled (user_cancelled)")
        child.expect_exact("> ")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "\x1b" not in screen.getvalue()
    assert "hidden by moot's own" not in screen.getvalue()  # what moot ships fits its commands


def test_the_plain_look_answers_an_approval_without_escape_sequences(tmp_path: Path) -> None:
    repo = repository(tmp_path)
    child = spawn(tmp_path, repo, EDIT_SCRIPT, "--plain", term="dumb")
    child.logfile_read = screen = io.StringIO()
    try:
        child.expect_exact("> ")
        child.send("make greet say hello\r")
        child.expect_exact("answer [y/s/a/n]: ")
        answer_until_taken(child, "y", "allowed by you")
        child.expect_exact("greet now says **hello**.")  # markdown left as written
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "\x1b" not in screen.getvalue()
    assert "tool edit greeting.py: ok" in screen.getvalue()


ESCAPE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|.)")
LINE_EDITING = re.compile(r"\x1b\[[0-9]*[ABCDJK]|\x1b\[\?2004[hl]")
"""What a plain prompt on a terminal needs: cursor moves and erasures that put the edited line
right, and bracketed paste (invisible; it keeps a pasted block one message)."""


def test_no_color_on_a_terminal_edits_lines_without_cursor_tricks(tmp_path: Path) -> None:
    """NO_COLOR on a real terminal: the plain REPL, its line editing usable (a typo erased
    with backspace is gone from the message), and no escape sequence beyond what editing the
    line needs: no hidden cursor, colour resets, autowrap toggles or cursor position requests
    (prompt_toolkit's own renderer sends dozens in a short session)."""
    repo = repository(tmp_path)
    child = spawn(tmp_path, repo, EDIT_SCRIPT, "--plain", term="xterm-256color", no_color=True)
    child.logfile_read = screen = io.StringIO()
    try:
        child.expect_exact("moot plain REPL (NO_COLOR is set)")
        child.expect_exact(">")
        child.send("make greet sya")
        child.send("\x7f\x7f")  # backspace twice: `sya` is `s`
        child.send("ay hello\r")
        child.expect_exact("answer [y/s/a/n]: ")
        answer_until_taken(child, "y", "allowed by you")
        child.expect_exact("greet now says **hello**.")  # no markdown styling either
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "hello, " in (repo / "greeting.py").read_text()
    sent = history_file(Path(os.path.realpath(repo))).read_text()
    assert '"make greet say hello"' in sent  # what was edited is what went
    tricks = [s for s in ESCAPE.findall(screen.getvalue()) if not LINE_EDITING.fullmatch(s)]
    assert tricks == []


def test_resume_without_an_id_picks_a_session_and_continue_takes_the_latest(
    tmp_path: Path,
) -> None:
    repo = repository(tmp_path)
    script = tmp_path / "script.yaml"
    script.write_text('turns:\n  - text: "answered"\n')
    for task in ("fix the parser", "write the docs"):
        subprocess.run(
            [str(MOOT), "-p", task, "--model", f"scripted:{script}"],
            cwd=repo, check=True, capture_output=True, timeout=30,
        )  # fmt: skip

    child = spawn(tmp_path, repo, script.read_text(), "--plain", "-r", term="xterm-256color")
    try:
        child.expect_exact("resume which")
        assert "write the docs" in child.before and "fix the parser" in child.before
        child.send("parser\r")  # a search narrows the list
        child.expect_exact("resume which")
        child.send("1\r")
        child.expect_exact("moot plain REPL")
        child.expect_exact("fix the parser")  # its history, from the store
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0

    child = spawn(tmp_path, repo, script.read_text(), "--plain", "-c", term="xterm-256color")
    try:
        child.expect_exact("moot plain REPL")
        # The latest is the one used last: the sitting `-r` just began (`session_resumed`).
        child.expect_exact("fix the parser")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_settings_that_wait_for_approval_are_asked_about_before_the_session_opens(
    tmp_path: Path,
) -> None:
    """The repository's `acceptEdits` is asked about first; approved, the edit runs unasked."""
    repo = repository(tmp_path)
    (repo / ".moot").mkdir()
    (repo / ".moot" / "settings.json").write_text('{"permissions": {"defaultMode": "acceptEdits"}}')
    child = spawn(tmp_path, repo, EDIT_SCRIPT, "--plain", term="xterm-256color")
    try:
        child.expect_exact('"defaultMode": "acceptEdits" (edits run without asking)')
        child.expect_exact("? [y/N] ")
        assert "moot plain REPL" not in child.before  # nothing opened before the answer
        child.send("y\r")
        child.expect_exact("ctrl+d quits")
        child.send("make greet say hello\r")
        child.expect_exact("greet now says")
        assert "moot asks to run edit" not in child.before
        assert "hello, " in (repo / "greeting.py").read_text()
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


PEER_SCRIPT = f"""\
turns:
  - tool_calls:
      - {{name: call_agent, arguments: {{agent_name: moot, message: help me}}}}
  - {{text: "{SLOW_LINES}", rate: 40, chunk_size: 4}}
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_ends_the_repl_as_quitting_does_and_the_turn_records_its_end(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """`kill`, or a terminal that went away, while a peer call streams: the REPL closes its
    session, so the callee's end, then the turn's, are recorded (nothing is left open for a
    resume to find). Fails on the old code: the signal ended the process there and then."""
    from moot.protocol import events as ev
    from moot.store.sqlite import SQLiteStore

    repo = repository(tmp_path)
    child = spawn(tmp_path, repo, PEER_SCRIPT, term="dumb")
    try:
        child.expect_exact("> ")
        child.send("go\r")
        child.expect_exact("line 2 of a slow answer")  # the callee streams
        child.kill(signum)
        child.expect(pexpect.EOF)
    finally:
        child.close()
    with SQLiteStore(Path(os.environ["MOOT_HOME"]) / "data" / "sessions.db") as store:
        (session,) = store.sessions()
        log = store.events(session.id)
    assert [e.kind for e in log[-3:]] == ["agent_returned", "tool_finished", "turn_finished"]
    assert isinstance(log[-1], ev.TurnFinished) and log[-1].stop_reason == "user_cancelled"
