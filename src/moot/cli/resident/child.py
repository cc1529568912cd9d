"""A fork of the resident process becoming the `moot` its caller would have been: the caller's
terminal, arguments, working directory, environment and umask, the signal handling a new
interpreter has, then `moot.cli.main`.

What the resident process's imports read of the environment was the caller's too (the zygote
refuses any other caller), so nothing imported holds another environment; what moot reads as it
runs, it reads from the caller's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any

PR_SET_NAME = 15
DEFAULT_HANDLERS = (
    signal.SIGCHLD,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGWINCH,
    signal.SIGTSTP,
    signal.SIGCONT,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


@dataclass(frozen=True)
class Request:
    """What a caller asked for (`client.request`), with the descriptors it handed over: its
    stdin, stdout and stderr, and its working directory (taken by descriptor, so that the child
    works where the caller does even when the path to it has changed or cannot be walked)."""

    argv: list[str]
    environ: dict[str, str]
    umask: int
    path0: str | None
    fds: tuple[int, int, int]
    cwd_fd: int
    limits: tuple[tuple[int, int, int], ...] = ()
    """The caller's resource limits (which, soft, hard)."""
    nice: int = 0

    @classmethod
    def parse(cls, data: Any, fds: list[int]) -> Request:
        """The request in `data`; ValueError when it is not one."""
        if not isinstance(data, dict) or len(fds) != 4:
            raise ValueError("not a request")
        argv, environ = data.get("argv"), data.get("environ")
        umask, path0 = data.get("umask"), data.get("path0")
        limits, nice = data.get("limits"), data.get("nice")
        if not (
            isinstance(limits, list)
            and all(
                isinstance(limit, tuple | list)
                and len(limit) == 3
                and all(isinstance(n, int) for n in limit)
                for limit in limits
            )
            and isinstance(nice, int)
        ):
            raise ValueError("not a request")
        if not (
            isinstance(argv, list)
            and argv
            and all(isinstance(arg, str) for arg in argv)
            and isinstance(environ, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in environ.items())
            and isinstance(umask, int)
            and 0 <= umask <= 0o777
            and (path0 is None or isinstance(path0, str))
        ):
            raise ValueError("not a request")
        return cls(
            argv, environ, umask, path0, (fds[0], fds[1], fds[2]), fds[3],
            tuple((which, soft, hard) for which, soft, hard in limits), nice,
        )  # fmt: skip


def become(request: Request) -> None:
    """Make this fresh fork the caller's `moot` (before `moot.cli.main` runs)."""
    for signum in DEFAULT_HANDLERS:
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    # A process group of its own, in the resident process's session: signals for the child
    # never reach the resident process, and a stop (Ctrl-Z) stops it, as a process group whose
    # parent is in another session would have it discarded.
    os.setpgid(0, 0)
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
    for fd in set(request.fds) - {0, 1, 2}:
        os.close(fd)
    os.umask(request.umask)
    name_process("moot")  # as `ps`, `top` and `pkill moot` know moot in its own process
    import resource  # here: the resident process checked these could be set (`Zygote._checked`)

    for which, soft, hard in request.limits:
        if resource.getrlimit(which) != (soft, hard):
            resource.setrlimit(which, (soft, hard))
    if os.getpriority(os.PRIO_PROCESS, 0) != request.nice:
        os.setpriority(os.PRIO_PROCESS, 0, request.nice)
    os.environ.clear()
    os.environ.update(request.environ)
    time.tzset()
    sys.argv = list(request.argv)
    if request.path0 is not None:
        sys.path.insert(0, request.path0)
    _standard_streams()
    try:
        os.fchdir(request.cwd_fd)
    finally:
        os.close(request.cwd_fd)


def _standard_streams() -> None:
    """New `sys.stdin`, `stdout` and `stderr` over descriptors 0-2, made as the interpreter
    makes them at start (stdout line-buffered on a terminal), with the resident process's
    encodings, which are the caller's (the same locale: `place.identity`)."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, f"__{name}__")
        stream = open(  # noqa: SIM115 (the interpreter's own streams are never closed either)
            fd,
            "r" if fd == 0 else "w",
            buffering=1 if fd == 2 or (fd == 1 and os.isatty(fd)) else -1,
            encoding=getattr(old, "encoding", None) or "utf-8",
            errors=getattr(old, "errors", None) or "strict",
            closefd=False,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def name_process(name: str) -> None:
    """Set this process's name (`comm`: what `ps`, `top` and `pkill` match), Linux only."""
    import ctypes  # loaded by the resident process already

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name.encode()[:15], 0, 0, 0)
