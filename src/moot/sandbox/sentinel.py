"""A small process that ends what the sandbox left once moot is gone, `kill -9` included.

moot starts it at the first sandboxed command (`sentinel()`: a session that runs none starts
none), in a session of its own (the person's ^C or a hangup of moot's terminal does not reach
it), its standard input the read end of a pipe whose write end only moot holds (close-on-exec:
no command inherits it), its output on /dev/null, every other descriptor closed. moot writes
to it, one NUL-ended record each, the temporary directories the sandbox made (`+path`) and
removed itself (`-path`), and each Docker engine a sandbox uses (`d<json>`: how to reach it
and the labels naming this moot, told before its first container; `docker_sentinel`). When
the pipe reaches its end, moot has exited or was killed: the sentinel kills what bubblewrap
runs for this moot (`end_all` of what is `marked`), removes the directories still listed,
then, when a Docker sandbox told it of an engine, becomes `docker_sentinel` (an exec: only
then is docker-py loaded), which removes the containers, relays and volumes labelled as this
moot's there, a minute at most, and exits.

What bubblewrap runs is known by its mark (`Sentinel.mark`, `--unsetenv MOOT_SENTINEL_<random>`
in each `bwrap` command line: a no-op for bwrap, in no command's environment; a command may
read it in its namespace's `/proc/1/cmdline`, which gives it nothing, as it can make no
process outside the namespace) rather than by a registered pid: bwrap's `--die-with-parent`
is armed late, and a `kill -9` of moot in a command's first milliseconds leaves the PID
namespace's init (a fork of bwrap, in a session of its own after `--new-session`) and the
command running, orphaned, where no process group moot knew reaches. The init carries
bwrap's command line, mark included; killing it ends every process of the namespace. A mark
needs no message per command (no cost to a command's start), cannot be raced by moot's death
between the fork and a registration, and names no pid that could be reused: whatever carries
the mark at the end, and runs as this user, is ours.
Landlock's commands are its zygote's to end (`landlock_zygote`: their ancestor, a child
subreaper, which kills every descendant when moot's end of its socket closes).

A command cannot reach the sentinel: bubblewrap's PID namespace hides it, Landlock's scopes
forbid signalling or tracing a process outside the sandbox (its `/proc` descriptors
included).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

_SETTLE = 0.05
"""Seconds between the last pass that found a marked process and the pass that confirms none
is left (a `bwrap` moot forked just before it died execs a moment later)."""
_MOST_PASSES = 200
DOCKER_RECORDS = "MOOT_SENTINEL_DOCKER"
"""The variable handing the Docker records (`Sentinel.watch_docker`) to `docker_sentinel`."""


class Sentinel:
    """moot's end of its sentinel process: started at first use (see the module docstring)."""

    def __init__(self) -> None:
        self.mark = f"MOOT_SENTINEL_{secrets.token_hex(8)}"
        """In each `bwrap` command line (`--unsetenv MARK`): what the sentinel ends."""
        self._lock = threading.Lock()  # the bubblewrap backend makes directories in threads
        self._write: int | None = None
        self._pid = 0
        self._cannot = False
        """It could not start here (no `posix_spawn` with `setsid`): commands run unwatched."""
        self._engines: list[bytes] = []
        """The Docker records told (`watch_docker`): a sentinel started again hears them first."""

    def started(self) -> str:
        """Start the sentinel unless it runs; its mark, for the command line of a `bwrap`."""
        with self._lock:
            self._ensure()
        return self.mark

    def watch(self, path: str | os.PathLike[str]) -> None:
        """Have the sentinel remove directory `path` should moot end before it does."""
        self._send(b"+" + os.fsencode(path), start=True)

    def forget(self, path: str | os.PathLike[str]) -> None:
        """moot removed `path` itself (or is about to)."""
        self._send(b"-" + os.fsencode(path), start=False)

    def watch_docker(self, engine: dict[str, object]) -> None:
        """Have the sentinel remove, once moot is gone, the containers and volumes `engine`
        (`docker_sentinel.engine_record`) names: told before the first one is made, as a
        directory's name is (`private_dir`). Told again, nothing is sent."""
        import json

        record = b"d" + json.dumps(engine, sort_keys=True).encode()
        with self._lock:
            if record in self._engines:
                return
            self._engines.append(record)
        self._send(record, start=True)

    def _send(self, record: bytes, *, start: bool) -> None:
        with self._lock:
            for _ in range(2):  # a sentinel that died is started again, once
                if self._write is None and not start:
                    return  # nothing to forget: no sentinel (or a new one) knows of it
                if (fd := self._ensure()) is None:
                    return
                try:
                    os.write(fd, record + b"\0")
                    return
                except OSError:
                    self._lost()

    def _ensure(self) -> int | None:
        if self._write is not None or self._cannot:
            return self._write
        read, write = os.pipe()  # neither inheritable: only the sentinel gets `read`, as fd 0
        try:
            actions = [
                (os.POSIX_SPAWN_DUP2, read, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            ]
            # -P: not the working directory (a workspace's `json.py`) on its import path
            argv = [sys.executable, "-P", "-m", "moot.sandbox.sentinel", self.mark]
            self._pid = os.posix_spawn(
                sys.executable, argv, dict(os.environ), file_actions=actions, setsid=True
            )
        except (OSError, NotImplementedError):
            os.close(write)
            self._cannot = True  # no worse than without a sentinel; not tried at every command
            return None
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        self._write = write
        with contextlib.suppress(OSError):  # it died at once: the next write starts another
            for told in self._engines:
                os.write(write, told + b"\0")
        return write

    def _lost(self) -> None:
        if self._write is not None:
            os.close(self._write)
            self._write = None
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self._pid, os.WNOHANG)


_THIS_PROCESS: tuple[int, Sentinel] | None = None
"""The sentinel of this process, with its pid. A global, as it watches for this process's
death, not a session's: every sandbox of the process shares it, and a forked child starts
its own."""
_STARTING = threading.Lock()


def sentinel() -> Sentinel:
    """This process's sentinel (moot's end; the process itself starts at its first use)."""
    global _THIS_PROCESS
    with _STARTING:
        if _THIS_PROCESS is None or _THIS_PROCESS[0] != os.getpid():
            _THIS_PROCESS = (os.getpid(), Sentinel())
        return _THIS_PROCESS[1]


def private_dir(prefix: str) -> Path:
    """A new directory in `$TMPDIR`, this user's only (0700) as `tempfile.mkdtemp` makes
    them, that the sentinel removes should moot end before it does (`remove_dir`). Its name
    is told first: no moment passes where it exists and the sentinel does not know it (moot
    killed then would leave it); a name told and never made costs the sentinel nothing."""
    import tempfile

    watcher = sentinel()
    for _ in range(100):
        path = Path(tempfile.gettempdir()).absolute() / f"{prefix}{secrets.token_hex(5)}"
        watcher.watch(path)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            watcher.forget(path)  # someone else's: never the sentinel's to remove
            continue
        return path
    raise FileExistsError(f"no free name for a directory in {tempfile.gettempdir()}")


def remove_dir(path: Path) -> None:
    """Remove a directory `private_dir` made, and tell the sentinel (a blocking call)."""
    shutil.rmtree(path, ignore_errors=True)
    sentinel().forget(path)


def descendants(pid: int) -> set[int]:
    """The processes below `pid` (children, theirs, ...), from one scan of /proc."""
    children: dict[int, list[int]] = {}
    for entry in _processes():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                fields = stat.read().rpartition(b")")[2].split()
        except (OSError, ValueError, IndexError):
            continue  # it ended meanwhile
        if fields and fields[0] != b"Z":  # a zombie is dead already
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def end_all(
    find: Callable[[], set[int]], *, settle: float = _SETTLE, passes: int = _MOST_PASSES
) -> None:
    """SIGKILL what `find()` finds, again until a pass finds nothing (what a killed process
    forked as it died shows in the next pass) and one more, `settle` seconds later, confirms
    it (0: no need, nothing can appear from outside what `find` sees); at most `passes`."""
    settled = False
    for _ in range(passes):
        found = find()
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        if found:
            settled = False
        elif settled or not settle:
            return
        else:
            settled = True
            time.sleep(settle)


def _reap() -> None:
    """Reap the children that ended (the zygote's, a subreaper's), so they leave /proc."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def marked(mark: str) -> set[int]:
    """The live processes of this user but this one whose command line holds `mark`."""
    wanted, found, uid = os.fsencode(mark), set(), os.getuid()
    for entry in _processes():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as file:
                if wanted not in file.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry.name}/status", "rb") as file:
                status = dict(
                    line.split(b":", 1) for line in file.read().splitlines() if b":" in line
                )
        except OSError:
            continue
        if status[b"State"].split()[0] != b"Z" and int(status[b"Uid"].split()[0]) == uid:
            found.add(int(entry.name))
    return found


def _processes() -> list[os.DirEntry[str]]:
    """The entries of /proc (none where there is no /proc: macOS, whose sandbox runs no bwrap
    and no zygote)."""
    try:
        return list(os.scandir("/proc"))
    except OSError:
        return []


def serve(mark: str) -> None:
    """The sentinel's main: note directories until moot's pipe ends, then end what is left."""
    for ignored in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(ignored, signal.SIG_IGN)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # whatever moot let through (posix_spawn)
    directories: dict[str, None] = {}
    engines: dict[str, None] = {}
    pending = b""
    while chunk := os.read(0, 1 << 16):
        *records, pending = (pending + chunk).split(b"\0")
        for record in records:
            kind, told = record[:1], os.fsdecode(record[1:])
            if kind == b"+":
                directories[told] = None
            elif kind == b"-":
                directories.pop(told, None)
            elif kind == b"d":
                engines[told] = None
    end_all(lambda: marked(mark))
    for path in directories:
        shutil.rmtree(path, ignore_errors=True)
    if engines:
        _become_docker_cleaner(list(engines))


def _become_docker_cleaner(records: list[str]) -> None:
    """Exec `docker_sentinel`, which removes what moot left on the engines of `records`: only
    a sentinel a Docker sandbox told of an engine loads docker-py."""
    import json

    argv = [sys.executable, "-P", "-m", "moot.sandbox.docker_sentinel"]
    with contextlib.suppress(OSError):  # nothing to tell: moot is gone
        os.execve(sys.executable, argv, {**os.environ, DOCKER_RECORDS: json.dumps(records)})


if __name__ == "__main__":
    serve(sys.argv[1])
