"""`moot --plain` as its own process holds CPython's collector off while it starts (prompt_toolkit
and the session's modules load meanwhile) and lets it go once the session is open, its heap
frozen, as `moot -p` does (issue 31: the collector's scans of the growing heap cost ~10-20 ms
of CPU before the session line). Through a pseudo-terminal, as a person runs it; a hook only
notes the collector's state when prompt_toolkit is first asked for, and at the exit.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pexpect

from pty_moot import hello_repository, in_terminal, terminal_env

WATCHER = """\
import atexit, gc, sys

notes_file = sys.argv.pop(1)
notes = {}


class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "prompt_toolkit" and "loading" not in notes:
            notes["loading"] = gc.isenabled()
        return None


def write():
    notes["at_exit"] = gc.isenabled()
    notes["frozen"] = gc.get_freeze_count()
    with open(notes_file, "w") as out:
        out.write(repr(notes))


atexit.register(write)
sys.meta_path.insert(0, Watch())
from moot.cli import main

sys.exit(main())
"""


def test_the_collector_is_held_while_the_repl_starts_and_let_go_once_the_session_opens(
    tmp_path: Path,
) -> None:
    repo, script = hello_repository(tmp_path)
    watcher, notes = tmp_path / "watch.py", tmp_path / "notes"
    watcher.write_text(WATCHER)
    argv = [str(watcher), str(notes), "--plain", f"--model=scripted:{script}"]
    child = in_terminal(sys.executable, argv, repo, terminal_env(tmp_path))
    try:
        child.expect_exact("session ses_")
        child.send("\x04")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    seen = ast.literal_eval(notes.read_text())  # the dict the watcher wrote
    assert seen["loading"] is False  # held while prompt_toolkit loaded
    assert seen["at_exit"] is True  # let go once the session opened
    assert seen["frozen"] > 0
