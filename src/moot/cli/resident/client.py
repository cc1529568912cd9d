"""The `moot` that a resident process runs: it hands its terminal and its request over, then
stands in for the child (signals in, exit status out) until the child ends.

It sends nothing before it has checked who listens on the socket as the resident process
checks who asks (`peer.check`: the same user, unconfined as this process is). What it sends
is one message, its length first, with its stdin, stdout, stderr and working directory
attached (`SCM_RIGHTS`); what comes back are lines (`zygote` writes them):

- `started <pid>`: the child runs; signals this process gets are forwarded as `signal <n>`;
- `stopped` / `continued`: the child stopped (Ctrl-Z in the app) or went on: this process does
  the same, so that the shell takes the terminal back and gives it again;
- `exit <n>` / `killed <n>`: the child ended: this process ends the same way (with its status,
  or by its signal);
- `refused <why>`: this process runs moot itself (`attach` returns None).

Everything here runs before moot's own modules load: the standard library's C modules only,
so that asking costs microseconds when there is no resident process.
"""

from __future__ import annotations

import _socket
import array
import contextlib
import marshal
import os
import signal as _signal
import sys
from typing import Any

from moot.cli.resident import peer, place

FORWARDED = (
    _signal.SIGINT,
    _signal.SIGTERM,
    _signal.SIGHUP,
    _signal.SIGQUIT,
    _signal.SIGWINCH,
    _signal.SIGCONT,
    _signal.SIGTSTP,
    _signal.SIGUSR1,
    _signal.SIGUSR2,
)
"""What a terminal, a shell or a supervisor sends a `moot`; the child gets each in its place."""
EXIT_LOST = 1
"""The status when the resident process went away without saying how the child ended."""


def request(argv: list[str], ident: dict[str, object]) -> bytes:
    """The request for `argv`: this process's identity (`place.identity`) and what the child
    takes as its own (its working directory goes as a descriptor: `attach`)."""
    mask = os.umask(0)
    os.umask(mask)
    return marshal.dumps(
        {
            "identity": ident,
            "argv": [sys.argv[0], *argv],
            "environ": dict(os.environ),
            "umask": mask,
            "path0": sys.path[0] if sys.path and not sys.flags.safe_path else None,
            "limits": place.limits(),
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
        }
    )


def attach(argv: list[str]) -> tuple[int | None, bool]:
    """Run `argv` in a child of the resident process: its exit status, or None when there is
    no resident process to use (or it refused this one), with whether one should be started
    for the next `moot` (none was there, or the one there was out of date)."""
    ident = place.identity()
    path = place.socket_path(ident)
    if path is None:
        return None, False
    try:
        os.fstat(0), os.fstat(1), os.fstat(2)
    except OSError:
        return None, False  # a closed standard stream: nothing to hand over
    interactive = not any(arg in ("-p", "--print") for arg in argv)
    if interactive and _in_background():
        # The app or the REPL started with `&`: a child outside the terminal's session would
        # not be stopped as it reads or sets the terminal, and would read the shell's input.
        return None, False
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        _connect(sock, path)
    except (OSError, peer.Refused):
        # Nobody listens, or someone moot would not hand its terminal and environment to: a
        # resident process of this user's started now takes the socket's name.
        sock.close()
        return None, True
    try:
        payload = request(argv, ident)
        here = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:  # a working directory since removed, say: moot says so itself
        sock.close()
        return None, False
    try:
        return _served(sock, payload, here, interactive=interactive)
    finally:
        os.close(here)
        sock.close()


def _connect(sock: _socket.socket, path: str) -> None:
    """Connect to `path` and check that the process listening there is this user, unconfined
    as this process is (`peer.check`): a sandboxed command that can write the socket's
    directory could listen there, to be sent the keys in this environment and this terminal
    (whose input it could then read, or add to: `TIOCSTI`)."""
    sock.connect(path)
    peer.check(sock, peer.confinement("self"), "the resident process")


def _served(
    sock: _socket.socket, payload: bytes, here: int, *, interactive: bool
) -> tuple[int | None, bool]:
    fds = array.array("i", [0, 1, 2, here])
    header = len(payload).to_bytes(8, "big")
    lines = _Lines(sock)
    try:
        sock.sendmsg([header], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds.tobytes())])
        sock.sendall(payload)
    except OSError:
        pass  # refused before it read the request (`peer`): the reason is still to be read
    first = lines.next()
    if first is None or not first.startswith("started "):
        # A new resident process for the next `moot` where this one is out of date or gone;
        # none where it refused this caller, who would be refused by the next one too.
        return None, first is None or first.startswith("refused stale")
    word = first.split()[1] if len(first.split()) == 2 else ""
    if not word.isdigit() or int(word) <= 0:  # never a group or every process (`kill(-1)`)
        return None, True
    child = int(word)
    return _stand_in(sock, lines, child, interactive=interactive), False


class _Lines:
    """The resident process's lines, as they come."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def next(self) -> str | None:
        while b"\n" not in self.buffer:
            try:
                chunk = self.sock.recv(4096)
            except OSError:
                return None
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


def _stand_in(sock: _socket.socket, lines: _Lines, child: int, *, interactive: bool) -> int:
    """Forward signals to `child` until it ends; its status. `interactive`: the app or the
    REPL, which `bg` leaves stopped."""
    terminal = _saved_terminal()

    def forward(signum: int, frame: object) -> None:
        del frame
        if signum == _signal.SIGCONT and interactive and _in_background():
            # `bg` on the app or the REPL: the child stays stopped, and so does this process
            # (in its own process it would stop again at its first touch of the terminal).
            # `moot -p`, which only writes, goes on in the background as it would there.
            os.kill(os.getpid(), _signal.SIGSTOP)
            return
        with contextlib.suppress(OSError):
            sock.sendall(f"signal {signum}\n".encode())

    for signum in FORWARDED:
        _signal.signal(signum, forward)
    while (line := lines.next()) is not None:
        word, _, value = line.partition(" ")
        if word == "stopped":
            # The child stopped: so does this process, and its shell takes the terminal back.
            # SIGSTOP, not SIGTSTP, which would come back here to be forwarded.
            # `fg` then sends this process SIGCONT, which wakes the child in turn.
            os.kill(os.getpid(), _signal.SIGSTOP)
        elif word == "exit":
            return int(value)
        elif word == "killed":
            _restore_terminal(terminal)  # a killed app leaves the terminal as it had it
            return _killed_by(int(value))
    _restore_terminal(terminal)
    _hang_up(child)
    return EXIT_LOST


def _in_background() -> bool:
    """Whether stdin is a terminal whose foreground is another process group than this one."""
    try:
        return os.tcgetpgrp(0) != os.getpgrp()
    except OSError:
        return False  # not a terminal


def _killed_by(signum: int) -> int:
    """End by `signum`, as the child did: a shell tells an exit with 130 from a death by
    SIGINT (bash ends a loop or a script on the latter only, as it would have without a
    resident process). 128 + `signum` if this process outlives it."""
    import resource

    with contextlib.suppress(OSError, ValueError):  # the child dumped its core, if any
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    with contextlib.suppress(OSError, ValueError):  # SIGKILL's and SIGSTOP's cannot be set
        _signal.signal(signum, _signal.SIG_DFL)
    with contextlib.suppress(OSError, ValueError):
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
    return 128 + signum


def _saved_terminal() -> list[Any] | None:
    import termios

    try:
        return termios.tcgetattr(0)
    except termios.error:
        return None


def _restore_terminal(saved: list[Any] | None) -> None:
    """Put the terminal's modes back as they were when the child started, when this process
    is in the terminal's foreground: in the background (`moot &`), they are another job's,
    and setting them would stop this process (SIGTTOU) instead of ending it."""
    if saved is None:
        return
    import termios

    if _in_background():
        return
    with contextlib.suppress(termios.error):
        termios.tcsetattr(0, termios.TCSADRAIN, saved)


def _hang_up(child: int) -> None:
    """The resident process went away under a running child: end it as a closed terminal
    would, so that nothing goes on drawing on a terminal its shell has back."""
    with contextlib.suppress(OSError):
        os.kill(child, _signal.SIGHUP)
        os.kill(child, _signal.SIGCONT)


def spawn() -> None:
    """Start a resident process for this interpreter, import path and moot, detached from this
    process's terminal and session, writing what it has to say to `<key>.log` beside its
    socket. It starts in this directory, so that a relative `PYTHONPATH` means to it what it
    meant here, and moves to `/` once loaded; it ends itself when it is not the one asked for."""
    ident = place.identity()
    path = place.socket_path(ident)
    if path is None:
        return
    import subprocess

    base = os.path.dirname(path)
    name = place.key(ident)
    flags = ["-O"] * sys.flags.optimize + (["-I"] if sys.flags.isolated else [])
    for option, value in sys._xoptions.items():
        flags += ["-X", option if value is True else f"{option}={value}"]
    if sys.flags.utf8_mode and "utf8" not in sys._xoptions:
        # Started in the C locale, this process is in UTF-8 mode and set LC_CTYPE=C.UTF-8 in
        # its environment (PEP 538, 540): the resident process, which inherits that, would
        # not be, and so not the one asked for (`place.identity`'s flags).
        flags += ["-X", "utf8"]
    try:
        log = os.open(
            os.path.join(base, f"{name}.log"),
            os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            subprocess.Popen(
                [sys.executable, "-P", *flags, "-m", "moot.cli.resident.zygote", name],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True, close_fds=True,
            )  # fmt: skip
    finally:
        os.close(log)


def ask(what: str) -> str | None:
    """Ask the resident process for this interpreter `status` or to `stop`: its answer, or
    None when there is none."""
    path = place.socket_path(place.identity())
    if path is None:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        _connect(sock, path)
        payload = marshal.dumps({what: True})
        sock.sendall(len(payload).to_bytes(8, "big") + payload)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    except (OSError, peer.Refused):
        return None
    finally:
        sock.close()
    return answer.decode("utf-8", "replace")
