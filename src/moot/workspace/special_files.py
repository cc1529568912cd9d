"""Ending a program moot runs over a repository's files at its deadline, or at once when it
meets a special file there: a FIFO it waits on, a device it reads without end.

A repository may ship either where a program opens files on its own: ripgrep opens every
`.gitignore`, `.ignore` and `.rgignore` it meets (following a symlink), git every file a config
`include.path` names. Opening a FIFO for reading waits for a writer that never comes; a
`.gitignore` linked to `/dev/zero` is one line without end, which ripgrep held in memory (1.8 GB
in 3 s, here). Each search or listing would be held to its deadline (20 s, git's 30 s), memory
growing all the while, and a listing stopped at its deadline is made again at the next look.

The kernel says both, in `/proc`: a thread waiting in `wait_for_partner` (`task/TID/wchan`) is
opening a FIFO; a descriptor past 0-2 on a character or block device (`fd/N`) is one it reads.
Neither program opens either otherwise (ripgrep skips all but regular files when it walks; git
reads no FIFO or device of its own; git itself refuses a device's endless line at once), so
the run is killed and the caller says why or does without it (the walk reads ignore files
without following links or blocking, `ignore.read_lines`). Where the kernel hides `wchan` (it
then reads `0`), a FIFO is ended by the deadline alone, as before.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time

POLL_S = 0.05
"""How often the watch looks at the run's threads and descriptors: a handful of tiny reads
each time, while it runs (a search, a listing or git's config: usually well under a second)."""
_FIFO_OPEN = b"wait_for_partner"


class SpecialFileWatch:
    """Kills `process` at `deadline` (`time.monotonic`), or as soon as it waits to open a FIFO
    or reads a device (`special`). `stop` once the run is over."""

    def __init__(self, process: subprocess.Popen[bytes], deadline: float) -> None:
        self.process = process
        self.deadline = deadline
        self.special = False
        self._over = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="special-files", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._over.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._over.wait(min(POLL_S, max(0.0, self.deadline - time.monotonic()))):
            if time.monotonic() >= self.deadline:
                self.process.kill()
                return
            if waits_on_fifo(self.process.pid) or reads_a_device(self.process.pid):
                self.special = True
                self.process.kill()
                return


def waits_on_fifo(pid: int) -> bool:
    """Whether a thread of `pid` waits to open a FIFO (False where the kernel does not say)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/wchan", "rb") as wchan:
                if wchan.read() == _FIFO_OPEN:
                    return True
        except OSError:
            continue
    return False


def reads_a_device(pid: int) -> bool:
    """Whether `pid` holds a descriptor past its standard streams on a character or block
    device (its standard streams may be a terminal, or `/dev/null`)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        if fd in ("0", "1", "2"):
            continue
        try:
            mode = os.stat(f"/proc/{pid}/fd/{fd}").st_mode
        except OSError:
            continue
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            return True
    return False
