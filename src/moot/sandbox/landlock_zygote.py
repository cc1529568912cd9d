"""A small process that starts the Landlock backend's commands: it forks, and the child enters
the sandbox (`landlock_child.Entry`) and execs.

Why not fork moot itself (`subprocess`'s `preexec_fn`): moot has threads, and a lock another
thread held at the fork stays held in the child; and forking a process of moot's size, then
running Python in the child, costs 5-10 ms a command, more than this backend may add
(`benchmarks/landlock_overhead.py`). The zygote has one thread and a small heap: forking it is
safe and cheap. It starts once per sandbox (`Zygote.start`), a child of moot's, and ends with
the sandbox or with moot (its end of the socket closes).

The protocol, one message per `SOCK_SEQPACKET` datagram, JSON:

- moot asks `{"argv", "cwd", "env", "filter"}` with four descriptors (stdin, stdout, stderr,
  the Landlock ruleset) and the seccomp program's bytes (hex) in `filter`;
- the zygote answers `{"pid"}` as soon as it has forked: a command that could not start (no
  such directory or program, or the sandbox refused) says so on its stderr and ends with
  127, as a shell says of a program it cannot run;
- and later, for each command that ended, `{"ended", "status"}` (as `os.waitstatus_to_exitcode`).

The command leads a session of its own, so moot kills its process group as it kills any
command's (`process.GroupProcess`); it is the zygote's child, and the zygote reaps it. The
zygote is a child subreaper: what a command leaves behind (a double fork, a `setsid`) becomes
the zygote's child, not init's, and so stays below it. When moot's end of the socket closes
(moot stopped the sandbox, exited or was killed, `kill -9` included), the zygote kills every
process below it (`sentinel.end_all`) before it exits: no command outlives moot.
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

from moot.sandbox.landlock_child import Entry, become_subreaper, drop_exec_capabilities
from moot.sandbox.sentinel import descendants, end_all

_MAX = 1 << 20


def serve(fd: int) -> None:
    """Serve requests on the socket `fd` until moot closes it (the zygote's main), then end
    every process below the zygote."""
    drop_exec_capabilities()  # once here, rather than in each child
    become_subreaper()
    channel = socket.socket(fileno=fd)
    try:
        _serve(channel)
    except OSError:
        pass  # moot's end closed as the zygote wrote to it (killed as a command started)
    finally:  # whatever ends the zygote ends what it ran first
        end_all(lambda: descendants(os.getpid()), settle=0.0)


def _serve(channel: socket.socket) -> None:
    """Start commands as moot asks and tell it which ended, until its end of `channel`
    closes (moot stopped this sandbox, exited or was killed)."""
    entries: dict[str, Entry] = {}
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the person's ^C is moot's to handle
    while True:
        ready, _, _ = select.select([channel.fileno(), wake_read], [], [])
        if wake_read in ready:
            while True:
                try:
                    if not os.read(wake_read, 512):
                        break
                except BlockingIOError:
                    break
            _reap(channel)
        if channel.fileno() in ready:
            message, fds, _, _ = socket.recv_fds(channel, _MAX, 4)
            if not message:  # moot is gone, or stops this sandbox: so does what it ran
                return
            try:
                answer = _start(json.loads(message), fds, entries)
            except OSError as error:  # no fork to be had (out of processes, of memory)
                answer = {"error": str(error)}
            finally:
                for received in fds:
                    os.close(received)
            channel.send(json.dumps(answer).encode())


def _reap(channel: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ended = {"ended": pid, "status": os.waitstatus_to_exitcode(status)}
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


def _start(
    request: dict[str, object], fds: list[int], entries: dict[str, Entry]
) -> dict[str, object]:
    """Fork the command of `request`; `entries` keeps the entry made for each filter."""
    stdin, stdout, stderr, ruleset = fds
    program = str(request["filter"])
    entry = entries.get(program)
    if entry is None:
        entry = entries[program] = Entry(bytes.fromhex(program) or None)
    argv = [str(arg) for arg in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    cwd = str(request["cwd"])
    found = _found(argv[0], env.get("PATH"))
    pid = os.fork()
    if pid == 0:  # the child: nothing here may return
        try:
            os.setsid()
            for target, source in enumerate((stdin, stdout, stderr)):
                os.dup2(source, target)
            os.chdir(cwd)
            entry(ruleset)
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGINT, signal.SIGCHLD, *_IGNORED_BY_PYTHON):
                signal.signal(sig, signal.SIG_DFL)  # ignored stays ignored across exec
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
    return {"pid": pid}


if __name__ == "__main__":
    serve(int(sys.argv[1]))
