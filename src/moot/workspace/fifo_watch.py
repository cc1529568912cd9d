"""Ending a program moot runs over a repository's files at its deadline, or at once when it
waits on a FIFO.

Opening a FIFO for reading waits for a writer that never comes, and a repository may ship one
where a program opens files on its own: ripgrep opens every `.gitignore`, `.ignore` and
`.rgignore` it meets, git every file a config `include.path` names. Each search, listing or
git call would be held to its deadline (20 s, 30 s), and a listing stopped at its deadline is
made again at the next look. The kernel names what a waiting thread waits in
(`/proc/PID/task/TID/wchan`): `wait_for_partner` is a FIFO's open. Neither program opens a
FIFO otherwise (ripgrep skips all but regular files when it walks; git reads no FIFO of its
own), so the run is killed and the caller says why or does without it (the walk reads ignore
files without blocking, `ignore.read_lines`). Where the kernel hides `wchan` (it then reads
`0`), the deadline alone ends the wait, as before.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

POLL_S = 0.05
"""How often the watch looks at the run's threads: a handful of tiny reads each time, while
it runs (a search, a listing or git's config: usually well under a second)."""
_FIFO_OPEN = b"wait_for_partner"


class FifoWatch:
    """Kills `process` at `deadline` (`time.monotonic`), or when one of its threads waits to
    open a FIFO (`waited_on_fifo`). `stop` once the run is over."""

    def __init__(self, process: subprocess.Popen[bytes], deadline: float) -> None:
        self.process = process
        self.deadline = deadline
        self.waited_on_fifo = False
        self._over = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="rg-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._over.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._over.wait(min(POLL_S, max(0.0, self.deadline - time.monotonic()))):
            if time.monotonic() >= self.deadline:
                self.process.kill()
                return
            if waits_on_fifo(self.process.pid):
                self.waited_on_fifo = True
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
