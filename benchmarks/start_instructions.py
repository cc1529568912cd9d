"""Start-up counted in CPU instructions: the plain REPL beside a bare prompt_toolkit prompt and
the app beside a bare Textual app, each from process start to what a person sees.

The wall-time ratios of `repl_speed` and `app_speed` move by 0.2-0.3 between rounds of the same
code on a loaded two-core machine; instructions do not (valgrind's callgrind counts them, ~1%
apart between runs). Each program runs on a pty of 120x40 under `stop_at.py`, which ends it the
first time the function that puts a point on the screen returns:

- a prompt drawn: prompt_toolkit's `Renderer.render` (the bare prompt, and moot's before its
  session opens);
- the REPL's session line: `ReplSession._shown` (the line handed to the printer);
- a first paint: Textual's `App._display` (the bare app, and moot's before its session opens);
- the app's session line: the refresh after the status line took the session
  (`session_view._settle`).

Hash randomisation is off (`PYTHONHASHSEED=0`) so that every run builds the same dicts. The
rows are references: issue 31's targets are wall-time ratios (`repl_speed`, `app_speed`); these
say how much of each start is moot's own, steadily enough to compare two commits.

No resident-moot rows (`MOOT_RESIDENT=0` here): valgrind counts only the process it starts,
which through a resident moot is the client that hands the terminal to a fork valgrind never sees.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from app_speed import BARE_APP
from repl_speed import BARE_PROMPT, CPR_REQUEST, _workspace
from report import Row

NAME = "instructions"
STOP_AT = Path(__file__).with_name("stop_at.py")
PROMPT_DRAWN = "prompt_toolkit.renderer:Renderer.render"
REPL_LINE = "moot.repl.session:ReplSession._shown"
PAINTED = "textual.app:App._display"
APP_LINE = "moot.tui.session_view:_settle"
ROWS, COLUMNS = 40, 120
RUN_TIMEOUT_S = 600
"""Under callgrind a start-up runs ~50 times slower: a minute or so each."""
COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def run(*, quick: bool) -> list[Row]:
    del quick  # one run of each: the counts barely move, and cannot be shrunk
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return [Row("start-up instructions", "valgrind is not installed: not measured")]
    with tempfile.TemporaryDirectory(prefix="moot-bench-instructions-") as tmp:
        root = Path(tmp)
        repo, script, env = _workspace(root, answer_tokens=10)
        env["PYTHONHASHSEED"] = "0"
        env["MOOT_RESIDENT"] = "0"
        bare_prompt, bare_app = root / "bare_prompt.py", root / "bare_app.py"
        bare_prompt.write_text(BARE_PROMPT)
        bare_app.write_text(BARE_APP)
        model = ["--model", f"scripted:{script}"]
        counted = {
            name: _count(valgrind, stop, program, repo, env, root)
            for name, stop, program in [
                ("bare prompt", PROMPT_DRAWN, [str(bare_prompt)]),
                ("repl prompt", PROMPT_DRAWN, ["moot", "--plain", *model]),
                ("repl line", REPL_LINE, ["moot", "--plain", *model]),
                ("bare app", PAINTED, [str(bare_app)]),
                ("app paint", PAINTED, ["moot", *model]),
                ("app line", APP_LINE, ["moot", *model]),
            ]
        }
    prompt, app = counted["bare prompt"], counted["bare app"]
    return [
        Row("start-up instructions (callgrind): a bare prompt_toolkit prompt drawn", _m(prompt)),
        _over("  `moot --plain`: prompt drawn / the bare prompt", counted["repl prompt"], prompt),
        _over("  `moot --plain`: session line / the bare prompt", counted["repl line"], prompt),
        Row("start-up instructions (callgrind): a bare Textual app's first paint", _m(app)),
        _over("  the app: its first paint / the bare app's", counted["app paint"], app),
        _over("  the app: session line painted / the bare app's paint", counted["app line"], app),
    ]


def _m(instructions: int) -> str:
    return f"{instructions / 1e6:,.0f}M"


def _over(what: str, instructions: int, bare: int) -> Row:
    return Row(
        what,
        f"{instructions / bare:.2f}x ({_m(instructions)}: +{_m(instructions - bare)})",
        "(reference)",
    )


def _count(
    valgrind: str, stop: str, program: list[str], cwd: Path, env: dict[str, str], root: Path
) -> int:
    """Instructions from the start of `program` to the first return of `stop`."""
    argv = [sys.executable, str(STOP_AT), stop, *program]
    _on_pty(argv, cwd, env)  # warm: the page cache, and the .pyc files written
    log = root / "callgrind.log"
    counting = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", f"--log-file={log}"]
    _on_pty([*counting, *argv], cwd, env)
    found = COLLECTED.search(log.read_text())
    if found is None:
        raise RuntimeError(f"callgrind counted nothing for {program[0]}: {log.read_text()[-500:]}")
    return int(found.group(1))


def _on_pty(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    """Run `argv` on a pty of `ROWS` x `COLUMNS` until it ends, reading what it writes and
    answering its cursor-position requests."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, bytes([ROWS, 0, COLUMNS, 0, 0, 0, 0, 0]))
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    try:
        while process.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{argv[-3:]} did not end within {RUN_TIMEOUT_S} s")
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the far end closed: the process is ending
                    data = b""
                if CPR_REQUEST in data:
                    os.write(master, b"\x1b[1;1R" * data.count(CPR_REQUEST))
        if process.returncode != 0:
            raise RuntimeError(f"{argv[-3:]} ended with {process.returncode}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
