"""A small process that starts the Landlock backend's commands: it forks, and the child enters
the sandbox (`landlock_child.Entry`) and execs. The child for the next command is forked ahead,
while the last one runs, so that a start waits for neither a fork nor an answer.

Why not fork moot itself (`subprocess`'s `preexec_fn`): moot has threads, and a lock another
thread held at the fork stays held in the child; and forking a process of moot's size, then
running Python in the child, costs 5-10 ms a command, more than this backend may add
(`benchmarks/landlock_overhead.py`). The zygote has one thread and a small heap: forking it is
safe and cheap. It starts once per sandbox (`Zygote.start`), a child of moot's, and ends with
the sandbox or with moot (its end of the socket closes).

The protocol, one message per `SOCK_SEQPACKET` datagram, JSON:

- the zygote announces `{"spare"}`: the process id of a child it forked ahead for the next
  command (`_Spares`), which makes itself a session's leader first and waits for its request
  (in the next `{"ended"}` message, when a command runs);
- moot asks `{"argv", "cwd", "env", "filter"}` with four descriptors (stdin, stdout, stderr,
  the Landlock ruleset) and the seccomp program's bytes (hex) in `filter`, and `"spare"`, the
  process id announced last, when it has one: that request needs no answer, the command
  is that process. Without it the zygote forks a process for the request and answers
  `{"pid"}` once it has. A command that could not start (no such directory or program, or
  the sandbox refused) says so on its stderr and ends with 127, as a shell says of a program
  it cannot run;
- and later, for each command (or spare) that ended, `{"ended", "status"}` (as
  `os.waitstatus_to_exitcode`), and `"spare"` as above.

The command leads a session of its own, so moot kills its process group as it kills any
command's (`process.GroupProcess`); it is the zygote's child, and the zygote reaps it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import sys
from collections.abc import Callable

from moot.sandbox.landlock_child import Entry, drop_exec_capabilities

_MAX = 1 << 20


def serve(fd: int) -> None:
    """Serve requests on the socket `fd` until moot closes it (the zygote's main)."""
    drop_exec_capabilities()  # once here, rather than in each child
    channel = socket.socket(fileno=fd)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the person's ^C is moot's to handle
    spares = _Spares(channel, (wake_read, wake_write))
    try:
        while True:
            ready, _, _ = select.select([channel.fileno(), wake_read], [], [])
            if wake_read in ready:
                while True:
                    try:
                        if not os.read(wake_read, 512):
                            break
                    except BlockingIOError:
                        break
                _reap(channel, spares)
            if channel.fileno() in ready:
                message, fds, _, _ = socket.recv_fds(channel, _MAX, 4)
                if not message:
                    return  # moot is gone
                request = json.loads(message)
                try:
                    answer = spares.start(request, message, fds)
                except OSError as error:  # no fork to be had (out of processes, of memory)
                    answer = {"error": str(error)}
                finally:
                    for received in fds:
                        os.close(received)
                if answer is not None:
                    channel.send(json.dumps(answer).encode())
                spares.learn(request)
                with contextlib.suppress(OSError):  # the next start without a spare says why
                    spares.refill()
    finally:
        spares.discard()


class _Spares:
    """The next command's process, forked ahead of its request and announced to moot
    (`{"spare": pid}`), so that a command's start waits for no fork and for no answer: moot
    names the spare in its request and knows its process id already; the zygote hands the
    request on (`_wait_and_exec`) and forks the next spare while the command runs.

    A request that names no spare (moot had heard of none yet) gets a process forked for it,
    and an answer. A spare that ended before its request is reported ended like any command
    (moot forgets it; a request that named it already fails with 127, as a command that could
    not start)."""

    def __init__(self, channel: socket.socket, wake: tuple[int, int]) -> None:
        self._channel = channel
        self._wake = wake
        self.pid = 0
        """The announced spare's process id; 0 when there is none."""
        self._socket: socket.socket | None = None
        self._entries: dict[str, Entry] = {}
        self._running: set[int] = set()
        """The commands started and not yet reaped."""
        self._unannounced = False
        """The spare is not yet announced: it will be with the next command's end."""

    def start(
        self, request: dict[str, object], message: bytes, fds: list[int]
    ) -> dict[str, object] | None:
        """Start the command of `request` (its bytes `message`, its descriptors `fds`) in the
        spare it names, or else in a process forked now; the answer to send (None: the
        request named its spare, and needs none).

        Raises:
            OSError: No fork to be had (for a request that named no spare).
        """
        if "spare" not in request:
            pid, forked = _fork(self._forked)
            with contextlib.closing(forked):
                socket.send_fds(forked, [message], fds)
            self._running.add(pid)
            return {"pid": pid}
        spare = self._socket
        if request["spare"] == self.pid and spare is not None:
            self._running.add(self.pid)
            self.pid, self._socket = 0, None
            with contextlib.closing(spare), contextlib.suppress(OSError):
                socket.send_fds(spare, [message], fds)
                return None
        # Ended before it (moot hears so from `_reap`): the command could not start.
        with contextlib.suppress(OSError):
            os.write(fds[2], b"moot: the command could not start: its process had ended\n")
        return None

    def learn(self, request: dict[str, object]) -> None:
        """Make what the next spare should find made (after the start just made): the entry
        for this request's seccomp filter, the place of its program."""
        program = str(request["filter"])
        if program not in self._entries:
            self._entries[program] = Entry(bytes.fromhex(program) or None)
        env = request["env"]
        assert isinstance(env, dict)
        _found(str(request["argv"][0]), env.get("PATH"))  # type: ignore[index]

    def refill(self) -> None:
        """Fork a spare when there is none, and announce it: at once when no command runs,
        else with the next command's end (`announced`), which wakes moot anyway.

        Raises:
            OSError: No fork to be had.
        """
        if self._socket is not None:
            return
        self.pid, self._socket = _fork(self._forked)
        self._unannounced = bool(self._running)
        if not self._unannounced:
            self._channel.send(json.dumps({"spare": self.pid}).encode())

    def announced(self, message: dict[str, object]) -> dict[str, object]:
        """`message` to moot, with the spare's announcement when it is still to be made."""
        if self._unannounced and self._socket is not None:
            self._unannounced = False
            return {**message, "spare": self.pid}
        return message

    def _forked(self, theirs: socket.socket) -> None:
        """In a child just forked: shed the zygote's own descriptors, and wait for a request."""
        if self._socket is not None:
            self._socket.close()
        self._channel.close()  # the zygote's end is its own: moot sees it close
        signal.set_wakeup_fd(-1)
        for fd in self._wake:
            os.close(fd)
        _wait_and_exec(theirs, self._entries)

    def ended(self, pid: int) -> None:
        """`pid` ended: when it was the spare, there is none now."""
        self._running.discard(pid)
        if pid == self.pid and self._socket is not None:
            self._unannounced = False
            self._socket.close()
            self.pid, self._socket = 0, None

    def discard(self) -> None:
        """End the spare (the zygote is ending): it never had a command."""
        if self._socket is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self._socket.close()
            self.pid, self._socket = 0, None


def _fork(then: Callable[[socket.socket], None]) -> tuple[int, socket.socket]:
    """Fork a child that calls `then` with its end of a new socket pair (and never returns);
    its process id, and this end.

    Raises:
        OSError: No fork to be had.
    """
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        raise
    if pid == 0:  # the child: nothing here may return
        try:
            ours.close()
            then(theirs)
        finally:
            os._exit(127)
    theirs.close()
    return pid, ours


def _reap(channel: socket.socket, spares: _Spares) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        spares.ended(pid)
        ended = spares.announced({"ended": pid, "status": os.waitstatus_to_exitcode(status)})
        channel.send(json.dumps(ended).encode())


_IGNORED_BY_PYTHON = (signal.SIGPIPE, signal.SIGXFSZ)
"""What Python ignores at its start (a command gets them back, as `subprocess` gives them)."""
_FD_LIMIT = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 20
_FOUND: dict[tuple[str, str | None], str | None] = {}
"""Where a program lies on a PATH, as this process sees it: looked up once per PATH."""


def _found(program: str, path: str | None) -> str | None:
    """Where `program` lies on `path`, looked up here rather than in the child: there each
    `execve` of an entry before it fails under the ruleset, and a search of a long PATH costs
    about a millisecond. Only a first try: the sandbox allows less than this process sees, never
    more, so where that `execve` fails the child searches the PATH itself and reaches what it
    would have reached without the try (a program later on the PATH, or the same error)."""
    if "/" in program:
        return None
    key = (program, path)
    if key not in _FOUND:
        if len(_FOUND) > 64:
            _FOUND.clear()
        _FOUND[key] = shutil.which(program, path=path or os.defpath)
    where = _FOUND[key]
    # A program removed or replaced since is looked up again at its next start.
    return where if where is not None and os.access(where, os.X_OK) else None


def _wait_and_exec(channel: socket.socket, entries: dict[str, Entry]) -> None:
    """The spare: lead a session of its own (before moot learns its process id, so the group
    it kills is there from the start), wait for its request on `channel`, enter the sandbox
    and exec; it ends with the zygote when the request never comes. Never returns."""
    try:
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        message, fds, _, _ = socket.recv_fds(channel, _MAX, 4)
        if not message:
            os._exit(0)  # the zygote ended
        request = json.loads(message)
        stdin, stdout, stderr, ruleset = fds
        program = str(request["filter"])
        entry = entries.get(program) or Entry(bytes.fromhex(program) or None)
        argv = [str(arg) for arg in request["argv"]]
        env = {str(k): str(v) for k, v in request["env"].items()}
        found = _found(argv[0], env.get("PATH"))
        for target, source in enumerate((stdin, stdout, stderr)):
            os.dup2(source, target)
        os.chdir(str(request["cwd"]))
        entry(ruleset)
        for ignored in _IGNORED_BY_PYTHON:  # ignored stays ignored across exec
            signal.signal(ignored, signal.SIG_DFL)
        os.closerange(3, _FD_LIMIT)  # the command inherits its streams only (close_range)
        if found is not None:
            with contextlib.suppress(OSError):
                os.execve(found, argv, env)
        os.execvpe(argv[0], argv, env)  # found on the command's own PATH
    except BaseException as error:
        # Said on the command's stderr, as its exit code 127 says it did not run.
        with contextlib.suppress(BaseException):
            os.write(2, f"moot: the command could not start: {error}\n".encode())
        os._exit(127)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
