"""The app once its terminal is gone (a closed window, a dropped ssh connection, a killed tmux
pane): it ends as quitting does, instead of living on.

Textual (8.2) on its own does not: its input thread reads an end of file over and over (a core
busy for good, when no SIGHUP came: the terminal was not the process's controlling one); its
output thread ends at the first write that fails (EIO), after which the app's writes fill its
queue and the app's exit blocks on it for good; and a SIGCONT resumes "application mode" even
when nothing suspended it, so the SIGCONT the kernel sends with a hang-up's SIGHUP starts a
second output thread over the dead terminal, the first left waiting. A session left so holds its
sandbox, its servers and its turn.

So the terminal driver here (`MootDriver`, chosen by `MootApp.get_driver_class`) drops what is
written once the terminal fails, and resumes only after its own suspension (ctrl+z); and
`end_on_hangup` ends the app when its terminal hangs up. They use Textual's private driver
attributes (`_file`, `_must_signal_resume`, `_sigcont_application`), which is why textual is
pinned to 8.2.x.
"""

from __future__ import annotations

import asyncio
import select
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver

_HUNG_UP = select.POLLHUP | select.POLLERR


class TerminalOutput:
    """The terminal as Textual's output thread writes to it: after the first write or flush that
    fails, everything is dropped (the thread lives on, and so the app's writes never block)."""

    def __init__(self, file: IO[str] | Any) -> None:
        self._file = file
        self.failed = False

    def write(self, text: str) -> None:
        if self.failed:
            return
        try:
            self._file.write(text)
        except (OSError, ValueError):  # EIO: hung up; ValueError: the file was closed
            self.failed = True

    def flush(self) -> None:
        if self.failed:
            return
        try:
            self._file.flush()
        except (OSError, ValueError):
            self.failed = True

    def fileno(self) -> int:
        return self._file.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class MootDriver(LinuxDriver):
    """Textual's terminal driver, but its output survives a terminal that is gone and only its
    own suspension is resumed (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Before application mode starts its output thread, which writes to `_file`.
        self._file = TerminalOutput(self._file)  # type: ignore[assignment]

    def _sigcont_application(self, *_: object) -> None:
        if self._must_signal_resume:  # set as ctrl+z suspended it (`_sigtstp_application`)
            super()._sigcont_application()


def terminal_driver(chosen: type[Driver]) -> type[Driver]:
    """The driver an app runs on: Textual's choice (`chosen`), with moot's in place of its
    terminal driver."""
    return MootDriver if chosen is LinuxDriver else chosen


def end_on_hangup(exit_app: Callable[[], object]) -> None:
    """Call `exit_app` on the running loop once the terminal on stdin hangs up (nothing when
    stdin is no terminal)."""
    stdin = sys.__stdin__
    if stdin is None or not stdin.isatty():
        return
    loop = asyncio.get_running_loop()
    watch_hangup(stdin.fileno(), lambda: loop.call_soon_threadsafe(exit_app))


def watch_hangup(fd: int, gone: Callable[[], object]) -> None:
    """Call `gone`, from a thread of its own, once the terminal on `fd` hangs up.

    The thread waits in `poll` with no event asked for, which reports only a hang-up or an
    error: it costs nothing meanwhile. Where `poll` cannot watch the terminal (POLLNVAL: some
    systems' `poll` takes no devices) it ends without a word.
    """
    threading.Thread(
        target=_wait_for_hangup, args=(fd, gone), name="moot-terminal-watch", daemon=True
    ).start()


def _wait_for_hangup(fd: int, gone: Callable[[], object]) -> None:
    poller = select.poll()
    poller.register(fd, 0)
    while True:
        try:
            events = poller.poll()
        except OSError:
            return
        masks = [mask for _, mask in events]
        if any(mask & select.POLLNVAL for mask in masks):
            return
        if any(mask & _HUNG_UP for mask in masks):
            gone()
            return
