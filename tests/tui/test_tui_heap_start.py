"""`moot` (the app, as its own process) holds CPython's collector off while it starts (Textual
and the session's modules load meanwhile) and lets it go once the session is open, its heap
frozen, as `moot -p` and `moot --plain` do (issue 31). Through a pseudo-terminal, as a person
runs it; a hook only notes the collector's state when Textual's app module is first asked for,
and once the status line shows the session.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import pexpect

from pty_moot import hello_repository, in_terminal, terminal_env

WATCHER = """\
import gc, os, sys, threading, time

notes_file = sys.argv.pop(1)
notes = {}


class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "textual.app" and "loading" not in notes:
            notes["loading"] = gc.isenabled()
        return None


def write_when_asked():
    # The test creates `<notes>.ask` once the session shows; the notes are written then.
    while not os.path.exists(notes_file + ".ask"):
        time.sleep(0.01)
    notes["open"] = gc.isenabled()
    notes["frozen"] = gc.get_freeze_count()
    with open(notes_file, "w") as out:
        out.write(repr(notes))


threading.Thread(target=write_when_asked, daemon=True).start()
sys.meta_path.insert(0, Watch())
from moot.cli import main

sys.exit(main())
"""


def test_the_collector_is_held_while_the_app_starts_and_let_go_once_the_session_opens(
    tmp_path: Path,
) -> None:
    repo, script = hello_repository(tmp_path)
    watcher, notes = tmp_path / "watch.py", tmp_path / "notes"
    watcher.write_text(WATCHER)
    argv = [str(watcher), str(notes), f"--model=scripted:{script}"]
    child = in_terminal(sys.executable, argv, repo, terminal_env(tmp_path))
    try:
        child.expect_exact("ses_")  # the status line shows the session open
        Path(f"{notes}.ask").touch()
        end = time.monotonic() + 10
        while not notes.exists() and time.monotonic() < end:
            child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.05)  # keeps reading the pty
    finally:
        child.close(force=True)
    seen = ast.literal_eval(notes.read_text())  # the dict the watcher wrote
    assert seen["loading"] is False  # held while Textual loaded
    assert seen["open"] is True  # let go once the session opened
    assert seen["frozen"] > 0
