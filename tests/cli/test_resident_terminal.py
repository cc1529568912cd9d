"""The resident moot (`MOOT_RESIDENT=1`) end to end in real terminals: the plain REPL on a
pseudo-terminal (pexpect), the app and the REPL under bash's job control in tmux, a `moot`
killed while its child streams, and the exit status of `moot -p`. Each test has a resident
process of its own (its socket in a short private directory, started by a first `moot` that ran
in its own process) and checks that what it ran went through it: `moot resident status` counts
one more served, and lists the child while it runs.

Nothing sleeps to wait: every wait polls (pexpect's `expect`, the tmux screen, /proc, the
resident process's status) until what it waits for is there, with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pexpect

from pty_moot import in_terminal
from resident_harness import MOOT, Resident, ended, script, state, until
from tui.test_tui_tmux import Terminal, terminal  # noqa: F401 (the fixture)
from tui.test_tui_tmux import pytestmark as needs_tmux

SLOW = "".join(f"line {i} of a slow answer\n" for i in range(300))
"""At 40 tokens a second, 47 s of answer: it is still streaming whenever a test acts on it."""
WRAPPED_AT_50 = r"\n(?:\x1b\[[0-9;?]*[A-Za-z])*\. w12\."
"""The second row of `w00.w01...w24.` typed at the REPL's prompt, 50 columns wide."""
PROMPT = "moot-test$"
"""The prompt of the tests' bash (its `PS1`, trailing space dropped as the screen drops it)."""


def test_the_plain_repl_runs_in_a_child_of_the_resident_process_and_a_resize_reaches_it(
    pty_resident: Resident,
) -> None:
    resident = pty_resident
    resident.start()
    child = in_terminal(str(MOOT), ["--plain", "--model", resident.model], resident.repo,
                        resident.env)  # fmt: skip
    try:
        child.expect_exact("moot plain REPL")
        child.expect(r"session ses_\w+")
        assert resident.served() == 1
        assert resident.only_child() != child.pid  # the REPL runs in the fork, not in `moot`

        typed = "".join(f"w{i:02d}." for i in range(25))  # 100 columns: one row at 120
        child.send(typed)
        child.expect_exact(typed[-4:])
        child.setwinsize(40, 50)
        # The REPL draws the line again at the new width: "> " and 12 words on the first row,
        # the continuation ". " and the 13th word starting the next.
        child.expect(WRAPPED_AT_50)
        # prompt_toolkit also polls the size (every 0.5 s): a resize there and back between
        # two polls is seen only through SIGWINCH, which only `moot` gets from the kernel
        # (the child is not in the terminal's session) and forwards.
        _drawn(child)
        child.setwinsize(40, 120)
        child.setwinsize(40, 50)
        child.expect(WRAPPED_AT_50, timeout=5)
        child.send("\r")
        child.expect_exact("hello there")
        child.send("\x04")  # ctrl+d at the empty prompt
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert resident.children() == []


@needs_tmux
def test_the_app_through_the_resident_process_paints_answers_resizes_stops_and_quits(
    terminal: Terminal,  # noqa: F811
    tmux_resident: Resident,
    tmp_path: Path,
) -> None:
    resident = tmux_resident
    resident.start()
    bash = shell(terminal, resident.repo, tmp_path)
    terminal.keys(f"{MOOT} --model {resident.model}", "Enter")
    terminal.wait_for(lambda s: "scripted:" in s and "tools" in s, "the wide layout")
    assert resident.served() == 1
    child = resident.only_child()
    [client] = _children(bash)

    terminal.keys("hi", "Enter")
    terminal.wait_for(lambda s: "hello there" in s, "the answer")
    terminal.tmux("resize-window", "-t", terminal.name, "-x", "80", "-y", "24")
    terminal.wait_for(
        lambda s: "tools" not in s and "scripted:" in (s.rstrip().splitlines() or [""])[-1],
        "the narrow layout, the status line at the bottom",
    )

    # `kill -TSTP` (the app binds no ctrl+z): the app leaves the screen and stops, and so does
    # `moot`, so the shell takes the terminal back; `fg` brings the app back, painted whole
    # (the chat's answer too, not the prompt alone), which answers.
    os.kill(client, signal.SIGTSTP)
    terminal.wait_for(
        lambda s: "Stopped" in s and _last_line(s) == PROMPT, "the job stopped, the prompt"
    )
    until(lambda: state(child) == state(client) == "T", "the child and moot stopped")
    terminal.keys("fg", "Enter")
    until(lambda: "T" not in (state(child), state(client)), "both running again")
    terminal.wait_for(
        lambda s: "╭" in s and "hello there" in s and PROMPT not in s, "the app, whole, again"
    )
    terminal.keys("again", "Enter")
    terminal.wait_for(lambda s: "second answer" in s, "the next answer")

    terminal.keys("C-c")
    terminal.keys("C-c")
    terminal.wait_for(lambda s: _last_line(s) == PROMPT, "the shell's prompt")
    # The terminal is the shell's again as it was: lines and echo on (bash keeps the modes a
    # job that exited left, for the next command, so a raw terminal would show here).
    terminal.keys("echo status-$?; stty -a", "Enter")
    screen = terminal.wait_for(lambda s: "status-0" in s and "icanon" in s, "the status and modes")
    words = screen.split()
    assert {"icanon", "echo", "isig"} <= set(words), screen
    assert not {"-icanon", "-echo", "-isig"} & set(words), screen
    assert resident.children() == []


@needs_tmux
def test_ctrl_z_stops_the_repl_and_its_moot_and_fg_brings_both_back(
    terminal: Terminal,  # noqa: F811
    tmux_resident: Resident,
    tmp_path: Path,
) -> None:
    resident = tmux_resident
    resident.start()
    bash = shell(terminal, resident.repo, tmp_path)
    terminal.keys(f"{MOOT} --plain --model {resident.model}", "Enter")
    terminal.wait_for(lambda s: "ctrl+d quits" in s, "the REPL")
    terminal.keys("hi", "Enter")
    terminal.wait_for(lambda s: "hello there" in s, "the first answer")
    child = resident.only_child()
    [client] = _children(bash)

    terminal.keys("C-z")  # the REPL's own suspend: SIGTSTP to the child's process group
    terminal.wait_for(
        lambda s: "Stopped" in s and _last_line(s) == PROMPT, "the job stopped, the prompt"
    )
    until(lambda: state(child) == state(client) == "T", "the child and moot stopped")

    terminal.keys("fg", "Enter")
    until(lambda: "T" not in (state(child), state(client)), "both running again")
    terminal.wait_for(lambda s: _last_line(s).endswith("$0.0000"), "the REPL's toolbar again")
    terminal.keys("again", "Enter")
    terminal.wait_for(lambda s: "second answer" in s, "the next answer")
    terminal.keys("C-d")
    terminal.wait_for(lambda s: _last_line(s) == PROMPT, "the shell's prompt")
    terminal.keys("echo status-$?", "Enter")
    terminal.wait_for(lambda s: "status-0" in s, "moot's exit status")
    assert resident.served() == 1
    assert resident.children() == []


@needs_tmux
def test_a_moot_in_the_background_whose_child_is_killed_ends_killed_not_stopped(
    terminal: Terminal,  # noqa: F811
    tmux_resident: Resident,
    tmp_path: Path,
) -> None:
    """`moot -p ... &`, its child killed: `moot` ends as a killed moot would (the job
    "Killed"). Fails on the old code: putting the terminal's modes back from the background
    stopped it on SIGTTOU ("Stopped (tty output)"), for as long as nobody ran `fg`."""
    resident = tmux_resident
    resident.start()
    bash = shell(terminal, resident.repo, tmp_path)
    slow = script(tmp_path / "slow.json", SLOW, rate=40)
    terminal.keys(f"{MOOT} -p go --model {slow} > answer.txt &", "Enter")
    until(resident.children, "the child")
    child = resident.only_child()
    [client] = _children(bash)
    os.kill(child, signal.SIGKILL)
    until(lambda: ended(client), "moot's end")
    terminal.keys("jobs", "Enter")
    terminal.wait_for(lambda s: "Killed" in s, "the job reported killed")
    assert resident.served() == 1


def test_a_moot_killed_while_its_child_streams_hangs_the_child_up(
    pty_resident: Resident, tmp_path: Path
) -> None:
    resident = pty_resident
    resident.start()
    slow = script(tmp_path / "slow.json", SLOW, rate=40)
    moot = in_terminal(str(MOOT), ["--plain", "--model", slow], resident.repo,
                       resident.env)  # fmt: skip
    try:
        moot.expect_exact("ctrl+d quits")
        moot.send("go\r")
        moot.expect_exact("line 2 of a slow answer")
        child = resident.only_child()
        os.kill(moot.pid, signal.SIGKILL)

        def hung_up() -> bool:
            with contextlib.suppress(pexpect.TIMEOUT, pexpect.EOF):
                moot.read_nonblocking(1 << 16, timeout=0)  # the terminal never fills up
            return child not in resident.children()

        until(hung_up, "the child's end", seconds=10)
    finally:
        moot.close(force=True)
    assert state(child) == "gone"  # reaped by the resident process
    done = resident.ask("hi")
    assert (done.returncode, done.stdout) == (0, "hello there\n")
    assert resident.served() == 2


def test_moot_p_ends_through_the_resident_process_as_it_does_in_its_own(
    pty_resident: Resident, tmp_path: Path
) -> None:
    resident = pty_resident
    resident.start()
    model = resident.model
    for args, expected in ((["-p", "hi", "--model", model], 0), (["--no-such-option"], 2)):
        own, served = resident.moot(*args, own=True), resident.moot(*args)
        assert (served.returncode, served.stdout) == (own.returncode, own.stdout)
        assert served.returncode == expected
        if expected:
            assert served.stderr == own.stderr  # argparse's usage, on the same stderr
    assert resident.served() == 2

    slow = script(tmp_path / "slow.json", SLOW, rate=40)
    # SIGINT to `moot` stops the turn; SIGKILL to the process that runs moot (the child, when
    # resident) ends `moot` as it ends moot in its own process: by that signal.
    for signum in (signal.SIGINT, signal.SIGKILL):
        codes = [_signalled_mid_answer(resident, slow, signum, own=own) for own in (True, False)]
        assert codes[0] == codes[1], (signum, codes)
    assert resident.served() == 4
    assert resident.children() == []


def _signalled_mid_answer(resident: Resident, slow: str, signum: int, *, own: bool) -> int:
    """`moot -p` streaming `slow`, sent `signum` once its answer streams (SIGKILL: to the
    child when resident); its exit status."""
    args = ["-p", "go", "--model", slow, "--output-format", "stream-json"]
    moot = resident.popen(
        *args, "--include-partial-messages", own=own,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert moot.stdout is not None
        seen, end = b"", time.monotonic() + 20
        while b'"text_delta"' not in seen:
            assert time.monotonic() < end, seen
            if select.select([moot.stdout], [], [], 0.5)[0]:
                seen += os.read(moot.stdout.fileno(), 1 << 16)
        target = moot.pid if own or signum != signal.SIGKILL else resident.only_child()
        os.kill(target, signum)
        moot.communicate(timeout=20)
    finally:
        if moot.poll() is None:
            moot.kill()
            moot.wait()
    return moot.returncode


def _drawn(child: pexpect.spawn, quiet_s: float = 0.3, deadline_s: float = 10) -> None:
    """Wait until `child` has drawn nothing for `quiet_s` (what it drew is read and dropped)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            child.read_nonblocking(1 << 16, timeout=quiet_s)
        except pexpect.TIMEOUT:
            child.buffer = ""
            return
        assert time.monotonic() < end, "the REPL never stopped drawing"


def shell(terminal: Terminal, repo: Path, tmp_path: Path) -> int:  # noqa: F811
    """bash with job control in the tmux terminal, at its prompt in `repo`; its pid."""
    rc = tmp_path / "bashrc"
    rc.write_text(f"PS1='{PROMPT} '\n")
    terminal.tmux("new-session", "-d", "-s", terminal.name, "-x", "120", "-y", "40",
                  "-c", str(repo), f"bash --noprofile --rcfile {rc} -i")  # fmt: skip
    terminal.wait_for(lambda s: _last_line(s) == PROMPT, "bash's prompt")
    return int(terminal.tmux("display", "-p", "-t", terminal.name, "#{pane_pid}"))


def _last_line(screen: str) -> str:
    return (screen.rstrip().splitlines() or [""])[-1].rstrip()


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
